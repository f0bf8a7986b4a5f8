"""Fine-tuning recipes for NLUE (needs the ``train`` extra: torch, transformers).

``nlue.training.presets`` holds the parameter-subset presets I–VIII of the paper's fine-tuning
protocol (section 5), as defined by us: the paper does not spell out the exact subsets.
Submodules are imported explicitly so that importing this package loads no torch.
"""
