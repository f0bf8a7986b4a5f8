"""`nlue submit`: a results folder checked, rescored from its predictions and packed for the leaderboard."""
