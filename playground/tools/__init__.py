"""Entry points without a browser: the CLI, the bench, the soak, the Space builder, training.

The library (core, hw, load, run, lab, web) never imports from here.
"""
