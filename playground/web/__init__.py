"""The Gradio page and its API: wiring, views in English and Chinese, and the code to copy."""
