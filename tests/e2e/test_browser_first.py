"""The first five minutes, in a real browser: defaults that read well, a page that keeps its results when the
language changes, Chinese everywhere the playground speaks, and a layout that holds at 1366 and 1920 px.

One visit, as a newcomer makes it: load the bundled model with the page's defaults, generate (sampled, fixed
seed), run the manual loop, run a break-it mistake, run a small Compare, inspect, diagnose; then switch to
Chinese and walk every tab, failing on visible English outside an allow-list (code, model and device names,
units, the libraries' own messages); switch back; measure the layout by element boxes, in both languages.
Drives Debian's Chromium through Playwright (see tests/e2e/test_browser.py for the set-up and its skip rule).
"""

from __future__ import annotations

import os
import re
import shutil
import time

import pytest

from tests.conftest import ROOT as ROOT_PATH
from tests.e2e.conftest import ARTIFACTS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

# Visible text the Chinese page may keep in Latin letters: code and identifiers, names of models, devices,
# libraries and formats, units, and the technical words the Chinese text itself uses (as Chinese tutorials do).
ALLOWED = {
    # names: models, libraries, formats, hardware
    "shakespeare-gpt2", "gpt2", "distilgpt2", "GPT-2", "PyTorch", "Transformers", "Accelerate", "Hugging", "Face",
    "Hub", "safetensors", "Python", "Gradio", "AMD", "EPYC", "Apple", "MPS", "CUDA", "CPU", "GPU", "NVML", "NVIDIA", "PCIe", "Inductor",
    "AVX512-BF16", "AMX", "psutil", "macOS", "Jinja", "torch", "torchao", "playground",
    "Embedding",  # PyTorch's class, named where int8 skips it (a single capital: not caught by the CamelCase rule)
    # devices and dtypes, as PyTorch spells them
    "cpu", "cuda", "mps", "auto", "meta", "float32", "float16", "bfloat16", "bf16", "fp16",
    # the playground's technical words (parameters, API names), kept as written in Chinese text too
    "token", "tokens", "tokens/s", "dtype", "RSS", "KV", "eval", "dropout", "temperature", "top_p", "max_new_tokens",
    "instruct", "kernel", "memcpy", "p90", "id", "owner/name", "Language", "English", "Tensor.to", "data_ptr",
    "apply_chat_template", "add_generation_prompt", "True", "tokenizer.apply_chat_template", "generate",
    "from_pretrained", "device_map", "hf_device_map", "mmap", "VRAM", "Hz", "Δ", "EOS", "JSON",
    # terms the Chinese prose gives in parentheses, as written in the code and the libraries' docs
    "prefill", "decode", "tied", "fake", "tensor", "traceback", "Traceback", "Transformer", "addmm", "mat1", "mat2",
    "int64", "int32", "int8", "int4", "uint8", "bool", "logits",
    # units
    "ms", "s", "B", "KiB", "MiB", "GiB", "TiB", "GB", "MB", "KB",
}
ALLOWED_PATTERNS = [
    re.compile(r"^(cpu|cuda(:\d+)?|mps|auto)/(float32|float16|bfloat16|auto)$"),  # a Compare pair
    re.compile(r"^PLAYGROUND_[A-Z_]+$|^HF_[A-Z_]+$|^CUDA_[A-Z_]+$"),  # environment variables
    re.compile(r"^[\w.-]+\.(csv|json|py|safetensors|jinja)$"),  # file names
    re.compile(r"^synthetic/[\w.-]+$|^[\w.-]+/[\w.-]+$"),  # synthetic and Hub model ids
    re.compile(r"^[\w.]+\(.*\)$"),  # a call: model.eval(), model.to('cpu'), generate()
    re.compile(r"^\w*_\w*|^\w+([.:]\w+)+"),  # an identifier: index_select, transformer.h.0.attn, cuda:0
    re.compile(r"^[A-Z]\w*(Error|Exception|Warning)$"),  # an exception's class, as Python names it
    re.compile(r"^(cpu|mps|cuda(:\d+)?)=[\d.]+[KMG]i?B$|^disk$"),  # memory limits as the API takes them
    re.compile(r"^\w*[a-z0-9][A-Z]\w*$"),  # a class in CamelCase: GPT2LMHeadModel, LayerNorm
]

# Every visible text node of the page, outside code, inputs, the JSON viewer and Gradio's own footer.
VISIBLE_TEXT = """() => {
  // code and inputs; a module's class (Inspect's <sub>); the download list's file names; Gradio's own
  // footer, toasts, progress overlay and its screen-reader announcer ("In queue: 1 of 2", in the browser's locale)
  const skip = 'code, pre, textarea, input, .cm-editor, [data-testid=json], .json-holder, footer, .toast-wrap, '
             + 'sub, #cmp-files table, [data-testid=status-tracker], .sr-only[role=status]';
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const n = walk.currentNode, e = n.parentElement;
    if (!e || !n.textContent.trim() || e.closest(skip)) continue;
    if (!e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
    if (e.closest('[style*="display: none"], .hide, [hidden]')) continue;
    out.push(n.textContent);
  }
  return out;
}"""

# Words split across two lines inside table cells, headings, labels and buttons: each word (a run of
# characters between spaces and punctuation, Chinese quotation marks included: a line may end before “) must lie
# on one line.
BROKEN_WORDS = """() => {
  const out = [];
  const cells = document.querySelectorAll('th, td, h1, h2, h3, label span, button');
  for (const el of cells) {
    if (!el.getClientRects().length) continue;
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
      const n = walk.currentNode, text = n.textContent;
      const re = /[^\\s,.;:()（）：，。、；–\\-/|·→=+×÷'"`\\[\\]{}“”‘’「」《》]+/g;
      let m;
      while ((m = re.exec(text))) {
        if (m[0].length < 2) continue;
        const r = document.createRange();
        r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top / 4)));
        if (tops.size > 1) out.push(m[0] + ' in <' + el.tagName.toLowerCase() + '>');
      }
    }
  }
  return out;
}"""

# Tables wider than their column, or cut by a box that clips (a table that overflows hides its last columns).
TABLES_OVERFLOW = """() => [...document.querySelectorAll('table')].filter(t => t.getClientRects().length).filter(t => {
  const r = t.getBoundingClientRect();
  for (let a = t.parentElement; a; a = a.parentElement) {
    const column = a.classList.contains('column'), clips = getComputedStyle(a).overflowX !== 'visible';
    if ((column || clips) && r.right > a.getBoundingClientRect().right + 1) return true;
    if (column) break;
  }
  return r.right > window.innerWidth;
}).map(t => (t.closest('[id]') || {}).id + ': ' + (t.innerText || '').slice(0, 40))"""

# A slider's label running into its number box: the label's text (which may overflow its own box) and the box.
LABELS_INTO_INPUTS = """() => [...document.querySelectorAll('.head')].filter(h => h.getClientRects().length).filter(h => {
  const l = h.querySelector('label span'), i = h.querySelector('input');
  if (!l || !i) return false;
  const range = document.createRange();
  range.selectNodeContents(l);
  const b = i.getBoundingClientRect(), box = h.getBoundingClientRect();
  const hit = [...range.getClientRects()].some(a =>
      a.right > b.left + 1 && a.left < b.right - 1 && a.bottom > b.top + 1 && a.top < b.bottom - 1);
  return hit || b.right > box.right + 1;  // or the box pushed out of its row
}).map(h => h.innerText.trim().slice(0, 40))"""

# The code box: one number in the gutter per line, each level with its line.
GUTTER = """() => {
  const lines = [...document.querySelectorAll('#snippet .cm-line')];
  const nums = [...document.querySelectorAll('#snippet .cm-lineNumbers .cm-gutterElement')]
      .filter(g => g.innerText.trim() && g.getBoundingClientRect().height > 0);
  const off = lines.map((l, i) => nums[i] ? Math.abs(l.getBoundingClientRect().top - nums[i].getBoundingClientRect().top) : 99);
  return {lines: lines.length, numbers: nums.length, worst: Math.max(0, ...off)};
}"""

# The timeline's legend: every entry has a size, lies inside every ancestor that clips (overflow other than
# visible), and above the peaks table that follows the plot.
LEGEND = """() => {
  const labels = [...document.querySelectorAll('#timeline .role-legend-label text, #timeline .role-legend-title text')];
  const below = document.querySelector('#peaks').getBoundingClientRect().top;
  return labels.map(t => {
    const r = t.getBoundingClientRect();
    let ok = r.width > 0 && r.height > 0 && r.bottom <= below;
    for (let a = t.parentElement; a && ok; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
      const b = a.getBoundingClientRect();
      ok = r.top >= b.top - 1 && r.bottom <= b.bottom + 1 && r.left >= b.left - 1 && r.right <= b.right + 1;
    }
    return [t.textContent, ok];
  });
}"""


VIEWPORT = {"width": 1366, "height": 900}


def _text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


def _wait_text(page, selector: str, pattern: str, timeout: float = 60_000) -> str:
    page.wait_for_function("([s, p]) => new RegExp(p).test((document.querySelector(s) || {}).innerText || '')",
                           arg=[selector, pattern], timeout=timeout)
    return _text(page, selector)


def _tab(page, en: str, zh: str) -> None:
    page.locator("button[role=tab]", has_text=re.compile(f"^({en}|{zh})$")).click()


def _lang(page, label: str, expect: str) -> None:
    page.locator("#lang label", has_text=label).click()
    _wait_text(page, "#status", expect, 15_000)
    time.sleep(1.0)  # every output of the switch is applied in one update; tab labels follow a moment later


def _generate_done(page) -> str:
    """The stats of this generation: finished, and not the previous run's (each carries its own timings)."""
    before = _text(page, "#stats")
    page.locator("#generate").click()
    page.wait_for_function(
        "([before, p]) => { const s = (document.querySelector('#stats') || {}).innerText || '';"
        " return s !== before && !/processing|queue:/.test(s) && new RegExp(p).test(s); }", arg=[before, r"^(done|完成)"], timeout=90_000)
    return _text(page, "#stats")


def _english_words(page, texts: list[str] | None = None) -> list[str]:
    """Words in Latin letters outside the allow-list, in the page's visible text (or in `texts`)."""
    found = []
    for text in page.evaluate(VISIBLE_TEXT) if texts is None else texts:
        for word in re.findall(r"[A-Za-z][\w.\-/:'=+()]*", text):
            word = word.rstrip(".:,;)'") if not re.search(r"\(.*\)$", word) else word
            if word in ALLOWED or any(p.match(word) for p in ALLOWED_PATTERNS) or not re.search(r"[A-Za-z]{2}", word):
                continue
            found.append(word)
    return found


def _layout(page, where: str) -> list[str]:
    problems = []
    broken = page.evaluate(BROKEN_WORDS)
    if broken:
        problems.append(f"{where}: words broken across lines: {broken[:8]}")
    wide = page.evaluate(TABLES_OVERFLOW)
    if wide:
        problems.append(f"{where}: tables wider than their column: {wide}")
    crowded = page.evaluate(LABELS_INTO_INPUTS)
    if crowded:
        problems.append(f"{where}: labels running into their inputs: {crowded}")
    return problems


def test_first_five_minutes_in_both_languages(page):
    ARTIFACTS.mkdir(exist_ok=True)
    # -- the defaults: load, then a sampled generation with a fixed seed
    page.locator("#load").click()
    report = _wait_text(page, "#report", "no-op")
    assert "from_pretrained" in report
    stats = _generate_done(page)
    assert "sampling" in stats
    text = page.locator("#output textarea").input_value()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    assert len(lines) >= 3 and len(set(lines)) == len(lines), text  # varied, not a loop
    code = page.locator("#snippet .cm-content").inner_text()
    assert "do_sample=True, temperature=0.8, top_p=0.95" in code and "torch.manual_seed(0)" in code
    assert "playground/assets/shakespeare-gpt2" in code
    time.sleep(1.5)  # the plot redraws after the update that carries it
    page.screenshot(path=str(ARTIFACTS / "first-generation.png"), full_page=True)
    if os.environ.get("PLAYGROUND_SCREENSHOT"):
        shutil.copy(ARTIFACTS / "first-generation.png", os.environ["PLAYGROUND_SCREENSHOT"])
    visible = "\n".join(page.evaluate(VISIBLE_TEXT)) + code
    assert str(ROOT_PATH) not in visible and os.path.expanduser("~") + "/" not in visible
    # the generation's memory ledger: a table under two stacked bars, the KV cache beside its estimate
    ledger = _text(page, "#ledger")
    assert "after the generation" in ledger and "KV cache" in ledger and "unaccounted" in ledger
    assert page.locator("#ledger-process .vega-embed, #ledger-process canvas, #ledger-process svg").count() > 0

    # -- greedy is one click away; the code to copy follows the engine that ran
    page.locator("#decoding label", has_text="greedy").click()
    page.wait_for_function("() => document.querySelector('#temperature input[type=number]').value === '0'",
                           timeout=10_000)
    page.locator("#engine label", has_text="manual loop + KV cache").click()
    stats = _generate_done(page)
    assert "greedy" in stats
    code = page.locator("#snippet .cm-content").inner_text()
    assert "def decode_one_token(" in code and "past_key_values=cache" in code and "model.generate(" not in code
    # CodeMirror measures an editor only while it is on screen (it watches its own visibility): look at the code box
    # as a reader would, then give its gutter the animation frame after the text
    page.locator("#snippet").scroll_into_view_if_needed()
    try:
        page.wait_for_function(f"() => {{ const g = ({GUTTER})(); return g.lines === g.numbers && g.worst <= 2; }}",
                               timeout=5_000)
    except Exception:
        pass
    gutter = page.evaluate(GUTTER)
    assert gutter["lines"] == gutter["numbers"] and gutter["worst"] <= 2, gutter
    spoil = page.add_style_tag(content="#snippet .cm-gutters { padding-top: 9px; }")  # the check can fail
    time.sleep(0.3)
    assert page.evaluate(GUTTER)["worst"] > 2
    page.evaluate("(el) => el.remove()", spoil)
    # the language switch says the stats again, and back
    _lang(page, "中文", "你的模型")
    assert "首个 token 耗时" in _text(page, "#stats") and "逐 token 解码耗时" in _text(page, "#stats")
    assert "阶段" in _text(page, "#report")
    _lang(page, "English", "Your model")
    assert "time to first token" in _text(page, "#stats") and "phase" in _text(page, "#report")
    page.locator("#engine label", has_text="generate()").click()
    page.locator("#decoding label", has_text="sampled").click()

    # -- a lab run: the generation's output and its code give way to the lab's result
    page.locator("#breakit input[type=checkbox]").check()
    page.locator("#generate").click()
    lab = _wait_text(page, "#lab", "The fix works|The fix did not work", 120_000)
    assert "What happened" in lab
    # the generation's output and its code to copy give way to the lab result (issue 23: they sat empty under it)
    assert not page.locator("#snippet .cm-content").is_visible() and not page.locator("#output textarea").is_visible()
    page.locator("#breakit input[type=checkbox]").uncheck()

    # -- Compare: warm-up and timed runs, beside the visitor's model, which stays
    _tab(page, "Compare", "对比")
    pairs = page.locator("#cmp-pairs label")
    for i in range(pairs.count()):
        label = pairs.nth(i)
        if label.locator("input").is_checked() != (label.inner_text().strip() in ("cpu/float32", "cpu/bfloat16")):
            label.click()
    page.locator("#cmp-tokens input[type=number]").fill("4")
    page.locator("#cmp-tokens input[type=number]").press("Enter")
    page.locator("#cmp-run").click()
    beside = _wait_text(page, "#cmp-beside", "none of them was unloaded", 240_000)
    assert "beside the 1 model loaded for visitors" in beside
    # the timings' table (the first; the dtype table under it repeats the pairs)
    table = page.locator("#cmp-table table").first.inner_text()
    rows = [ln for ln in table.splitlines() if ln.startswith("cpu/") and "\t" in ln]  # the rows, not the sentences under
    assert [r.split()[0] for r in rows] == ["cpu/float32", "cpu/bfloat16"] and all("1 warm-up + 3 timed" in r for r in rows)
    assert "shakespeare-gpt2" in _text(page, "#status") and "float32" in _text(page, "#status")

    # -- Inspect and Diagnose, so that every tab has a result to say again
    _tab(page, "Inspect", "检查张量位置")
    page.locator("#inspect-loaded").click()
    _wait_text(page, "#inspect", "transformer|Summary")
    _tab(page, "Diagnose an error", "诊断报错")
    page.locator("#diagnose-box textarea").fill(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of "
        "31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB memory in use. "
        "Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but "
        "unallocated.\nRuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cpu!")
    page.locator("#diagnose-run").click()
    _wait_text(page, "#diagnose", "Matching")
    assert "expandable_segments" in _text(page, "#diagnose")
    page.wait_for_selector("#oom-bar", state="visible", timeout=10_000)  # the message's numbers as a stacked bar
    # the estimate panel at a context and a batch: will it fit, on each device
    _tab(page, "Playground", "游乐场")
    page.locator("#fit-context input").fill("200")
    page.locator("#fit-batch input").fill("2")
    page.locator("#estimate").click()
    fit = _wait_text(page, "#estimate-out", "Will it fit at 200 tokens × batch 2")
    assert "largest context that fits" in fit and "KV cache per token" in fit

    # -- 中文: every result said again, and no stray English on any tab
    _lang(page, "中文", "你的模型")
    strays = {}
    for en, zh, results in (("Playground", "游乐场", {"#report": "阶段", "#lab": "发生了什么", "#peaks": "阶段",
                                                     "#ledger": "内存账本", "#estimate-out": "放得下吗"}),
                            ("Compare", "对比", {"#cmp-table": "组合", "#cmp-beside": "没有卸载"}),
                            ("Inspect", "检查张量位置", {"#inspect": "模块"}),
                            ("Diagnose an error", "诊断报错", {"#diagnose": "内存不足报错自带的数字"}),
                            ("Speed", "速度", {}),
                            ("Fact-check", "事实核查", {})):
        _tab(page, en, zh)
        time.sleep(0.5)
        for selector, words in results.items():
            assert words in _text(page, selector), (selector, _text(page, selector)[:300])
        strays[zh] = _english_words(page)
        page.screenshot(path=str(ARTIFACTS / f"zh-{en.split()[0].lower()}.png"), full_page=True)
    assert not any(strays.values()), "\n".join(f"{k}: {sorted(set(v))}" for k, v in strays.items())
    _tab(page, "Playground", "游乐场")
    page.locator("#breakit input[type=checkbox]").check()
    page.locator("#generate").click()  # a lab run in Chinese, then back: the result follows the language
    _wait_text(page, "#lab", "修复有效|修复在这里没有成功", 120_000)
    page.locator("#breakit input[type=checkbox]").uncheck()

    # -- the layout, measured, at two widths and in both languages, with every table on show
    page.locator("#estimate").click()
    _wait_text(page, "#estimate-out", "放得下|会被拒绝|Fits|Would be refused")
    page.get_by_text(re.compile("^(本机的设备|Devices on this machine)$")).first.click()
    page.wait_for_selector("#devices table", state="visible", timeout=10_000)
    problems = []
    for lang, label, expect in (("zh", "中文", "你的模型"), ("en", "English", "Your model")):
        _lang(page, label, expect)
        for width in (1366, 1920):
            page.set_viewport_size({"width": width, "height": 900})
            for en, zh in (("Playground", "游乐场"), ("Compare", "对比")):
                _tab(page, en, zh)
                time.sleep(0.8)
                problems += _layout(page, f"{lang} {width}px {en}")
            _tab(page, "Playground", "游乐场")
            page.locator("#timeline").scroll_into_view_if_needed()
            legend = page.evaluate(LEGEND)
            if not legend or not all(ok for _, ok in legend):
                problems.append(f"{lang} {width}px: timeline legend not visible: {legend}")
            page.screenshot(path=str(ARTIFACTS / f"layout-{lang}-{width}.png"), full_page=True)
    assert problems == [], "\n".join(problems)

    # -- each measurement can fail: the same checks on a page spoiled on purpose
    page.set_viewport_size({"width": 1366, "height": 900})
    _tab(page, "Playground", "游乐场")
    spoil = page.add_style_tag(content=(
        "#report table th:first-child, #report table td:first-child { width: 1px; overflow-wrap: anywhere !important;"
        " word-break: break-all !important; }"
        " #devices table { min-width: 900px !important; }"
        " #max-new .head { flex-wrap: nowrap !important; }"
        " #max-new .head label { flex: 0 0 40px !important; white-space: nowrap; letter-spacing: 12px; }"
        " #timeline .role-legend { transform: translate(0, 600px); }"))
    time.sleep(0.5)
    spoiled = _layout(page, "spoiled")
    assert [p.split(":")[1].strip() for p in spoiled] == [
        "words broken across lines", "tables wider than their column", "labels running into their inputs"], spoiled
    assert not all(ok for _, ok in page.evaluate(LEGEND))  # (the gutter's spoiled check ran beside the snippet)
    page.evaluate("(el) => el.remove()", spoil)

    # -- back in English, the results are English again
    assert "phase" in _text(page, "#report") and "What happened" in _text(page, "#lab")
    _tab(page, "Compare", "对比")
    assert "what limits decode" in _text(page, "#cmp-table") and "none of them was unloaded" in _text(page, "#cmp-beside")


# Every text the progress overlays, the toasts and the lab panel show, as each is drawn (they come and go
# within a second: a reading now and then would miss most of them).
WATCH = """() => {
  window.__seen = {progress: new Set(), toast: new Set(), lab: new Set(), labSeq: []};
  const read = () => {
    for (const e of document.querySelectorAll('[data-testid=status-tracker]')) {
      const s = (e.innerText || '').trim();
      if (s) window.__seen.progress.add(s);
    }
    for (const e of document.querySelectorAll('.toast-body')) window.__seen.toast.add(e.innerText.trim());
    const lab = document.querySelector('#lab');
    const first = lab && lab.innerText.trim() ? lab.innerText.trim().split('\\n')[0] : '';
    if (first) window.__seen.lab.add(first);
    const seq = window.__seen.labSeq;  // the lab's first lines in the order shown, each change once
    if (first && seq[seq.length - 1] !== first) seq.push(first);
  };
  new MutationObserver(read).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""
SEEN = "(k) => [...window.__seen[k]]"
# a progress overlay's own figures: its timer ("1.2s", "0.3/1.1s") and percentage, not words
FIGURES = re.compile(r"\b\d+(\.\d+)?(/\d+(\.\d+)?)?s\b|\d+(\.\d+)?%|\s[-–]\s")


def test_toasts_progress_and_lab_ticks_speak_chinese(page):
    """The Chinese walk's second half (issue 23): what shows for a moment. A refusal's toast is headed 错误 and
    says why in Chinese; every progress overlay of a load and a lab run speaks Chinese; a lab run says its seconds
    so far, and on its second run the time left from the first."""
    page.evaluate(WATCH)
    _lang(page, "中文", "你的模型")
    _tab(page, "Playground", "游乐场")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    # -- a refusal: its toast, headed in Chinese (Gradio writes "Error" from the level; the page's script says 错误)
    page.locator("#model input").fill("../../etc/passwd")
    page.locator("#model input").press("Enter")
    page.locator("#load").click()
    page.wait_for_selector(".toast-body.error", timeout=30_000)
    page.wait_for_function("() => document.querySelector('.toast-body.error .toast-title').innerText.trim() !== 'Error'",
                           timeout=5_000)
    assert page.locator(".toast-body.error .toast-title").first.inner_text().strip() == "错误"
    toast = page.locator(".toast-body.error").first.inner_text()
    assert "不在 playground 允许读取的文件夹内" in toast and "已拒绝" in _text(page, "#load-note"), toast
    page.screenshot(path=str(ARTIFACTS / "zh-toast.png"))
    page.locator(".toast-close").first.click()
    # -- a load's progress, phase by phase
    page.locator("#model input").fill("shakespeare-gpt2")
    page.locator("#model input").press("Enter")
    page.locator("#dtype label", has_text="bfloat16").click()
    page.locator("#load").click()
    _wait_text(page, "#status", "bfloat16", 60_000)
    # -- a lab run, twice: its ticks, then the time left from the first run. Two runs of one mistake can end
    # in the same text (they differ only in the fix's milliseconds), so a run is known by its running line
    # followed by a result; a mistake of half a second here (offload, with its warning) so the line is drawn
    page.locator("#breakit input[type=checkbox]").check()
    page.locator("#mistake input").click()
    page.locator("ul[role=listbox] li", has_text="Accelerate 唯一的那条警告没人看").first.click()
    for _ in range(2):
        shown = page.evaluate("() => window.__seen.labSeq.length")
        page.locator("#generate").click()
        page.wait_for_function(
            "(n) => { const q = window.__seen.labSeq.slice(n); const i = q.findIndex(l => l.startsWith('正在运行'));"
            " const s = document.querySelector('#lab').innerText;"
            " return i >= 0 && q.slice(i + 1).some(l => !l.startsWith('正在运行'))"
            " && /修复有效|修复在这里没有成功/.test(s); }", arg=shown, timeout=120_000)
    page.locator("#breakit input[type=checkbox]").uncheck()
    progress, lab, toasts = (page.evaluate(SEEN, k) for k in ("progress", "lab", "toast"))
    words = [w for w in (FIGURES.sub(" ", p) for p in progress) if w.strip()]
    assert len(words) >= 3, progress  # the load's phases were seen
    assert all(re.search(r"[\u4e00-\u9fff]", w) for w in words), progress
    assert _english_words(page, words) == [], progress
    # the first run: its seconds so far (and no estimate, unless another visitor of this server ran the same
    # mistake on the same model before); the second: the time left, from the first
    assert any(line.startswith("正在运行这个错误，然后运行修复：已用") for line in lab), lab
    assert any("大约还剩" in line and "秒（它最近几次在这里用这个模型运行用时" in line for line in lab), lab
    assert toasts and not any("Error" in x for x in toasts) and _english_words(page, toasts) == [], toasts
    _lang(page, "English", "Your model")

