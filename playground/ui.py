"""The page and the API: Gradio components wired to the core functions.

Nothing is measured here. Every number comes from `playground.models`,
`playground.memory` and `playground.generation` through the shared slot; this
module only turns reports into Markdown and UserErrors into `gr.Error`.
"""

from __future__ import annotations

import html
from typing import Iterator

import gradio as gr

from playground import devices, memory, models, zerogpu
from playground import snippet as code
from playground.generation import GenerationStats
from playground.inputs import MAX_NEW_TOKENS, UserError
from playground.slot import SLOT

INTRO = """# The device playground
Pick a model, a device and a dtype, press **Load**, and see what PyTorch does, measured on this machine:
how long `from_pretrained` takes to read the weights from disk, and *separately* how long `model.to(device)`
takes to move them; what that costs in RAM and VRAM; then watch tokens stream in with live tokens/s.
"""

# Load and generate share one queue lane: one runs at a time, the others wait their turn.
LANE = dict(concurrency_id="model", concurrency_limit=1)


# ---------------------------------------------------------------- formatting

def status_markdown() -> str:
    s = SLOT.status()
    if not s["loaded"]:
        return "**Loaded:** nothing yet. Press **Load** (the bundled model works offline)."
    extra = f" · ⚠️ {s['label']}" if s.get("label") else ""
    return f"**Loaded:** `{s['model']}` on `{s['device']}` in `{s['dtype']}`{extra}"


def devices_html(devs: list[devices.DeviceInfo]) -> str:
    rows = []
    for d in devs:
        mem = memory.fmt_bytes(d.total_memory) if d.total_memory else ""
        feats = ", ".join(f for f, ok in (("bf16", d.bf16), ("fp16", d.fp16)) if ok)
        style = "" if d.available else ' style="opacity:.5"'
        state = "✅ available" if d.available else "⛔ unavailable"
        rows.append(
            f"<tr{style} class='dev-{'on' if d.available else 'off'}'><td><code>{html.escape(d.id)}</code></td>"
            f"<td>{state}</td><td>{html.escape(d.name)}</td><td>{mem}</td><td>{feats}</td>"
            f"<td>{html.escape(d.reason)}</td></tr>"
        )
    return ("<table><thead><tr><th>device</th><th>state</th><th>name</th><th>memory</th>"
            "<th>native</th><th>note</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _vram_cell(gpus: list[dict]) -> str:
    if not gpus:
        return "—"
    return "<br>".join(
        f"cuda:{g['index']}: alloc {memory.fmt_bytes(g['allocated'])}, reserved {memory.fmt_bytes(g['reserved'])}"
        + (f", NVML {memory.fmt_bytes(g['nvml_used'])}/{memory.fmt_bytes(g['nvml_total'])}" if g.get("nvml_used") is not None else "")
        for g in gpus
    )


def report_markdown(r: models.LoadReport) -> str:
    lines = [f"### `{r.model}` → `{r.device}` · `{r.dtype}`"]
    if zerogpu.timing_label():
        lines.append(f"> ⏱️ {zerogpu.timing_label()}")
    if r.label:
        lines.append(f"> ⚠️ **{r.label}**")
    lines += [
        "",
        "| phase | what ran | time | RSS before → after | Δ RSS | VRAM after |",
        "|---|---|---:|---:|---:|---|",
    ]
    what = {
        "import": "find the model class (imports its code once per process)",
        "load": "`from_pretrained(...)`" + (" with `device_map='auto'`" if r.device == "auto" else ": disk → RAM"),
        "migrate": f"`model.to('{r.device}')`" if r.device != "auto" else "(placed while loading)",
        "eval": "`model.eval()`",
    }
    for p in r.phases:
        lines.append(
            f"| {p.name} | {what[p.name]} | {_secs(p.seconds)} | {memory.fmt_bytes(p.rss_before)} → "
            f"{memory.fmt_bytes(p.rss_after)} | {memory.fmt_bytes(p.rss_after - p.rss_before)} | {_vram_cell(p.vram_after)} |"
        )
    lines += [
        "",
        f"**Parameters:** {r.param_count:,} · **buffers:** {r.buffer_count} · "
        f"**weights:** {memory.fmt_bytes(r.weights_bytes)} in {r.dtype} (Σ numel × element size) · "
        f"**on disk:** {memory.fmt_bytes(r.disk_bytes)} (safetensors)",
        "",
        f"**Measured RAM growth over the whole load:** {memory.fmt_bytes(r.ram['delta'])} "
        f"against {memory.fmt_bytes(r.weights_bytes)} of weights in theory. "
        f"System RAM available after: {memory.fmt_bytes(r.ram['available_after'])}.",
        "",
        f"**dtype:** {r.dtype_reason}.",
        f"**migration:** {r.migrate_note}",
    ]
    if r.hint:
        lines.append(f"**hint:** {r.hint}")
    if not r.vram["available"]:
        lines.append(f"**VRAM:** {r.vram['reason']}.")
    if r.hf_device_map:
        lines.append("**placement (`hf_device_map`):** " + ", ".join(f"`{k or '(all)'}` → {v}" for k, v in r.hf_device_map.items()))
    return "\n".join(lines)


def stats_markdown(s: GenerationStats, running: bool) -> str:
    state = "generating…" if running else f"done ({s.finish_reason})"
    ttft = f"{s.ttft_seconds * 1000:.0f} ms" if s.ttft_seconds is not None else "—"
    rate = f"{s.tokens_per_second:.1f} tokens/s" if s.tokens_per_second else "—"
    decode_n = max(s.new_tokens - 1, 0)
    decode_t = f"{s.decode_seconds:.3f} s" if s.decode_seconds is not None else "—"
    return (
        f"**{state}** · mode: {'greedy' if s.greedy else 'sampling'}\n\n"
        f"| time to first token | prompt tokens | new tokens | decode rate | total |\n|---:|---:|---:|---:|---:|\n"
        f"| {ttft} | {s.prompt_tokens} | {s.new_tokens} | {rate} ({decode_n} tokens in {decode_t}) | {s.total_seconds:.2f} s |"
    )


def _secs(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


# ---------------------------------------------------------------- API endpoints (the documented contract)

def load_model(model: str, device: str, dtype: str) -> dict:
    """Load a model: from_pretrained onto the CPU, then model.to(device), then eval(); returns the timed report."""
    try:
        return SLOT.load(model, device, dtype).to_dict()
    except UserError as e:
        raise _error(e) from None


def _generate_plain(prompt, max_new_tokens, temperature, top_p, seed, session: str = "") -> Iterator[tuple[str, dict]]:
    """The GPU work, with plain arguments and plain results: on ZeroGPU it runs inside
    @spaces.GPU, in a worker process that pickles what crosses over."""
    for text, stats in SLOT.generate(prompt, max_new_tokens, temperature, top_p, seed, session=session):
        yield text, stats.to_dict()


_generate_on_gpu = zerogpu.gpu(_generate_plain)  # the same function off ZeroGPU


def generate(prompt: str, max_new_tokens: int, temperature: float, top_p: float, seed: int,
             request: gr.Request = None) -> tuple[str, dict]:
    """Stream a continuation of the prompt; each update is (text so far, stats so far). temperature 0 is greedy."""
    try:
        yield from _generate_on_gpu(prompt, max_new_tokens, temperature, top_p, seed, session=_session(request))
    except UserError as e:
        raise _error(e) from None


def _error(e: UserError) -> gr.Error:
    """gr.Error renders its message as HTML: escape it, since it may quote what a visitor typed.
    A UserError is an expected answer, not a crash: no traceback in the server log."""
    return gr.Error(html.escape(str(e), quote=False), print_exception=False)


def _session(request: gr.Request | None) -> str:
    return getattr(request, "session_hash", None) or ""


# ---------------------------------------------------------------- UI handlers

def ui_load(model: str, device: str, dtype: str, progress=gr.Progress()):
    try:
        report = SLOT.load(model, device, dtype, progress=lambda f, d: progress(f, desc=d))
    except UserError as e:
        raise _error(e) from None
    # The slider's top is the model's context minus one prompt token (at most the cap).
    top = min(MAX_NEW_TOKENS, report.context_length - 1) if report.context_length else MAX_NEW_TOKENS
    slider = gr.Slider(maximum=top, info=f"this model's context is {report.context_length or '?'} tokens, prompt included")
    return report_markdown(report), report.to_dict(), status_markdown(), slider


def ui_snippet(prompt, max_new_tokens, temperature, top_p, seed) -> str:
    """The code to copy for the loaded model and these settings ('' before a load or on bad input)."""
    lm, requested = SLOT.loaded, SLOT.requested
    if lm is None or requested is None:
        return ""
    try:
        return code.snippet(requested, lm.report.device, lm.report.dtype_requested, prompt,
                            max_new_tokens, temperature, top_p, seed)
    except UserError:
        return ""  # the generation reports the same problem


def ui_generate(prompt, max_new_tokens, temperature, top_p, seed, request: gr.Request):
    snippet = ui_snippet(prompt, max_new_tokens, temperature, top_p, seed)  # for the model this run uses
    try:
        for text, d in _generate_on_gpu(prompt, max_new_tokens, temperature, top_p, seed, session=_session(request)):
            stats = GenerationStats(**d)
            running = stats.finish_reason == "running"
            yield text, stats_markdown(stats, running=running), gr.skip() if running else snippet
    except UserError as e:
        raise _error(e) from None


def ui_stop(request: gr.Request):
    SLOT.stop(_session(request))


def ui_hint(device: str, dtype: str) -> str:
    try:
        dev = devices.check_device(device)
    except UserError as e:
        return f"⚠️ {e}"
    hint = devices.dtype_hint(dev, dtype)
    return f"💡 {hint}" if hint else ""


# ---------------------------------------------------------------- the page

def build() -> gr.Blocks:
    devs = devices.discover()
    usable = [d.id for d in devs if d.available]
    with gr.Blocks(title="The device playground") as demo:
        gr.Markdown(INTRO)
        status = gr.Markdown(status_markdown(), elem_id="status")
        with gr.Row():
            with gr.Column(scale=1):
                model = gr.Dropdown(
                    choices=[(e.label, e.id) for e in models.catalog()], value=models.BUNDLED_NAME,
                    allow_custom_value=True, label="Model",
                    info="Pick one, or type a Hub id (owner/name) or a local folder.", elem_id="model",
                )
                device = gr.Radio(usable, value="cpu", label="Device", elem_id="device")
                dtype = gr.Radio(list(devices.DTYPES), value="float32", label="dtype", elem_id="dtype")
                hint = gr.Markdown(ui_hint("cpu", "float32"), elem_id="hint")
                load_btn = gr.Button("Load", variant="primary", elem_id="load")
                with gr.Accordion("Devices on this machine", open=False):
                    gr.HTML(devices_html(devs), elem_id="devices")
            with gr.Column(scale=2):
                report_md = gr.Markdown("Press **Load** to see each phase timed and measured.", elem_id="report")
                with gr.Accordion("Raw load report (JSON)", open=False):
                    report_json = gr.JSON(elem_id="report-json")
        gr.Markdown("## Generate")
        prompt = gr.Textbox("ROMEO:", label="Prompt", lines=2, elem_id="prompt")
        with gr.Row():
            max_new = gr.Slider(1, MAX_NEW_TOKENS, value=64, step=1, label="max_new_tokens", elem_id="max-new")
            temperature = gr.Slider(0, 2, value=0, step=0.05, label="temperature (0 = greedy)", elem_id="temperature")
            top_p = gr.Slider(0.05, 1, value=1, step=0.05, label="top_p", elem_id="top-p")
            seed = gr.Number(0, precision=0, label="seed", elem_id="seed")
        with gr.Row():
            gen_btn = gr.Button("Generate", variant="primary", elem_id="generate")
            stop_btn = gr.Button("Stop", variant="stop", elem_id="stop")
        output = gr.Textbox(label="Output", lines=8, elem_id="output")
        stats_md = gr.Markdown(elem_id="stats")
        snippet_code = gr.Code(language="python", label="The code to copy: this run, in plain Transformers",
                               interactive=False, buttons=["copy"], elem_id="snippet")

        for comp in (device, dtype):
            comp.change(ui_hint, [device, dtype], hint, queue=False, api_visibility="private")
        load_btn.click(ui_load, [model, device, dtype], [report_md, report_json, status, max_new],
                       api_visibility="undocumented", **LANE)
        gen = gen_btn.click(ui_generate, [prompt, max_new, temperature, top_p, seed], [output, stats_md, snippet_code],
                            api_visibility="undocumented", **LANE)
        stop_btn.click(ui_stop, None, None, queue=False, api_visibility="private")
        # Another visitor may swap the model: keep the banner true.
        gr.Timer(5).tick(status_markdown, None, status, queue=False, api_visibility="private")
        demo.load(status_markdown, None, status, queue=False, api_visibility="private")

        gr.api(load_model, api_name="load_model", **LANE)
        gr.api(generate, api_name="generate", **LANE)
        del gen
    demo.queue(default_concurrency_limit=1)
    return demo


def launch_kwargs() -> dict:
    """Serve on PLAYGROUND_HOST/PORT (or Gradio's own defaults); no file serving beyond the app's."""
    import os

    kw: dict = {"allowed_paths": [], "show_error": True}
    if os.environ.get("PLAYGROUND_HOST"):
        kw["server_name"] = os.environ["PLAYGROUND_HOST"]
    if os.environ.get("PLAYGROUND_PORT"):
        kw["server_port"] = int(os.environ["PLAYGROUND_PORT"])
    return kw
