"""The lab: each classic mistake run live with its fix, the diagnoser, and where every tensor lives."""
