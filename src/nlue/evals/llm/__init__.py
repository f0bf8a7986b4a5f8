"""NLUE and neDIOM asked of language models: by log-likelihood, by generation (answer and number lines,
strict and lenient parsing), the prompt language, and `nlue llm` with its console output."""
