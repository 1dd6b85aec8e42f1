"""The device playground: `python app.py`, then open http://127.0.0.1:7860."""

from playground.ui import build, launch_kwargs

if __name__ == "__main__":
    build().launch(**launch_kwargs())
