"""The parts of the measurement harness that need no torch: which hardware/ id a device is, what a measured row
says and how it is written, the median of the timed steps. measure_steps.py and measure_kernels.py use them;
tests/python/test_measure_harness.py tests them on any machine.

A measurements row (issue #28, `prenet calibrate --measurements`) is a dict whose keys are `prenet predict`'s
option names (the option table's `name` column: `grad_accum`, not `--grad-accum`) plus `measured_ms` and
`measures` (`step` or `forward_backward`).
"""
import csv
import glob
import json
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HARDWARE_DIR = os.path.join(ROOT, "hardware")
ZOO_CONFIGS = os.path.join(HERE, "zoo_configs.json")


class HarnessError(Exception):
    """A mistake in what the harness was asked (or an unknown device): the message is for the user."""


# ---- the device's hardware/ id ----

# Names a driver reports that the rule below cannot match to a sheet's `name` (a marketing word the sheet does
# not carry). Everything else is matched by the rule; tests check that the rule and these give the ids the
# harness used to list by hand.
ALIASES = {
    "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb",
}

# Words that say who made a device, not which one it is.
VENDOR_WORDS = {"nvidia", "tesla", "geforce", "amd", "radeon", "instinct", "intel", "generation"}


def load_sheets(hardware_dir=HARDWARE_DIR):
    """[(id, name)] of the spec sheets in hardware/ (schema.json and files without an id left out)."""
    sheets = []
    for path in sorted(glob.glob(os.path.join(hardware_dir, "*.json"))):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("id"), str) and isinstance(doc.get("name"), str):
            sheets.append((doc["id"], doc["name"]))
    return sheets


def name_tokens(name):
    """The words that identify a device: lower case, split at spaces, dashes, underscores and brackets, vendor
    words dropped. 'NVIDIA A100-SXM4-80GB' and 'NVIDIA A100 SXM4 80GB' both give {a100, sxm4, 80gb}."""
    words = re.split(r"[\s\-_()/,]+", name.lower())
    return {w for w in words if w and w not in VENDOR_WORDS}


def device_id_from_name(name, sheets):
    """The hardware/ id of a device whose driver reports `name`, or None when no sheet (or more than one) fits.

    A sheet fits when its id is the name, or every identifying word of the reported name is a word of the
    sheet's name or id ('NVIDIA H200' fits 'NVIDIA H200 SXM 141GB'; 'NVIDIA GeForce RTX 3090 Ti' fits no sheet,
    the 3090's lacking 'ti'). ALIASES come first."""
    if not name:
        return None
    if name in ALIASES:
        return ALIASES[name]
    ids = {sid for sid, _ in sheets}
    if name.strip().lower() in ids:
        return name.strip().lower()
    want = name_tokens(name)
    if not want:
        return None
    fits = [sid for sid, sname in sheets if want <= (name_tokens(sname) | name_tokens(sid))]
    return fits[0] if len(fits) == 1 else None


def candidates_for_name(name, sheets):
    """Sheets sharing a word with `name`, for the error message when none fits exactly."""
    want = name_tokens(name or "")
    numbered = {w for w in want if any(ch.isdigit() for ch in w)}  # '3090', 'mi250x': the model, not 'rtx'
    want = numbered or want
    return [sid for sid, sname in sheets if want & (name_tokens(sname) | name_tokens(sid))]


def resolve_hardware(tool, backend, device_name, override, sheets):
    """The hardware id a row is filed under: `override` (--hardware) when given, else the device's name looked
    up (CUDA and ROCm report one). CPU and MPS have no sheet to look up: they need --hardware."""
    if override:
        return override
    if backend in ("cpu", "mps"):
        raise HarnessError("%s: a %s device has no hardware/ sheet to look up; pass --hardware ID "
                           "(an id of `prenet hardware`, or a spec JSON)" % (tool, backend.upper()))
    found = device_id_from_name(device_name, sheets)
    if found:
        return found
    near = candidates_for_name(device_name, sheets)
    raise HarnessError("%s: unknown device '%s'; pass --hardware ID (an id of `prenet hardware`%s)" % (
        tool, device_name, "; near: " + ", ".join(near) if near else ""))


# ---- what is measured ----

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
BACKENDS = ("cuda", "mps", "cpu")
OPTIMIZERS = ("adamw", "adam", "sgd")
ATTENTIONS = ("flash", "eager")
MEASURES = ("step", "forward_backward", "kernels")  # kernels: a profiler trace's (the `trace` column)

# torchvision's constructors for the vision models of the zoo (resnet50-v1 has none: torchvision's is v1.5).
VISION_MODELS = {
    "resnet18": "resnet18", "resnet50": "resnet50", "vgg16": "vgg16", "mobilenet-v2": "mobilenet_v2",
    "efficientnet-b0": "efficientnet_b0", "densenet121": "densenet121", "vit-b16": "vit_b_16",
}
# Hugging Face's BertForPreTraining at the zoo's sizes (MLM + NSP heads).
BERT_PRETRAINING = {
    "bert-base-pretraining": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                              "intermediate_size": 3072},
    "bert-large-pretraining": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                               "intermediate_size": 4096},
}


def zoo_configs(path=ZOO_CONFIGS):
    """{zoo id: Hugging Face config.json document} for the causal language models of prenet's zoo the harness
    can build (tests check each against `prenet features`: the same parameters and FLOPs as the zoo id)."""
    with open(path) as f:
        return json.load(f)


def model_kind(model, configs):
    """'vision', 'bert' or 'causal-lm' for a zoo id; a HarnessError for an id the harness cannot build."""
    if model in VISION_MODELS:
        return "vision"
    if model in BERT_PRETRAINING:
        return "bert"
    if model in configs:
        return "causal-lm"
    raise HarnessError("measure_steps: the harness cannot build '%s'; zoo ids it builds: %s; or pass --config "
                       "FILE (a Hugging Face config.json of a causal language model)" % (
                           model, ", ".join(sorted(list(VISION_MODELS) + list(BERT_PRETRAINING) + list(configs)))))


def check_args(a, configs):
    """Refuses contradictory or impossible requests before torch is imported. `a` has the parsed options of
    the model mode (model, config, batch, seq, image, precision, device, optimizer, attention, steps, warmup,
    grad_accum). Returns the model's kind."""
    if bool(a.model) == bool(a.config):
        raise HarnessError("measure_steps: give one of --model (a zoo id) or --config (a config.json)")
    kind = "causal-lm" if a.config else model_kind(a.model, configs)
    if a.config and not os.path.isfile(a.config):
        raise HarnessError("measure_steps: --config %s: no such file" % a.config)
    for name in ("batch", "steps", "grad_accum"):
        if getattr(a, name) < 1:
            raise HarnessError("measure_steps: --%s must be at least 1" % name.replace("_", "-"))
    if a.warmup < 0:
        raise HarnessError("measure_steps: --warmup must be 0 or more")
    if kind == "vision":
        if a.seq is not None:
            raise HarnessError("measure_steps: %s is a vision model: --image, not --seq" % a.model)
        if a.image is not None and a.image < 32:
            raise HarnessError("measure_steps: --image must be at least 32")
    else:
        if a.image is not None:
            raise HarnessError("measure_steps: %s is a language model: --seq, not --image" % (a.model or a.config))
        if a.seq is None or a.seq < 1:
            raise HarnessError("measure_steps: a language model needs --seq (tokens per sample)")
    if a.precision == "tf32" and a.device not in ("auto", "cuda"):
        raise HarnessError("measure_steps: tf32 is a CUDA setting; use fp32 on %s" % a.device)
    return kind


def mixed_of(precision):
    """The `mixed` recipe a run of `precision` uses: torch.autocast for fp16 and bf16 (fp32 weights), none
    otherwise. The harness runs no other recipe."""
    return "autocast" if precision in ("fp16", "bf16") else None


def attention_of(implementation):
    """prenet's --attention for the attention a model ran: Hugging Face's `config._attn_implementation`
    (sdpa and flash_attention_2/3 are one fused kernel: `flash`; eager materialises the scores), None for a
    model without attention."""
    if implementation is None:
        return None
    if implementation in ("sdpa", "flash_attention_2", "flash_attention_3", "flash"):
        return "flash"
    if implementation == "eager":
        return "eager"
    raise HarnessError("measure_steps: attention implementation '%s' has no prenet --attention name "
                       "(flash or eager); ask for --attention flash or eager" % implementation)


def hf_attention_request(attention):
    """What to ask Hugging Face transformers for: prenet's flash is PyTorch's SDPA."""
    return {"flash": "sdpa", "eager": "eager"}[attention]


# The columns a measurements CSV can have, in the order written; a row leaves out those it has no value for.
COLUMNS = ["model", "hardware", "batch", "seq", "image", "precision", "mixed", "attention", "optimizer",
           "optimizer_impl", "grad_accum", "measured_ms", "measures", "trace"]


def row(model, hardware, batch, precision, optimizer, optimizer_impl, measured_ms, measures="step", seq=None,
        image=None, attention=None, grad_accum=1, trace=None):
    """One measured run as a dict keyed by prenet's option names (plus measured_ms and measures); the settings
    are those the run had, so `prenet predict` with them as flags predicts the run. measured_ms None (a
    --dry-run's plan) is written as an empty cell."""
    if measures not in MEASURES:
        raise HarnessError("measures must be one of %s" % ", ".join(MEASURES))
    if (measures == "kernels") != (trace is not None) or (trace is not None and measured_ms is not None):
        raise HarnessError("a profiler trace's row measures kernels, its time in the trace (no measured_ms)")
    if measured_ms is not None and not measured_ms > 0:  # None: a plan (--dry-run), the time left empty
        raise HarnessError("measured_ms must be positive, not %r" % (measured_ms,))
    values = {"model": model, "hardware": hardware, "batch": batch, "seq": seq, "image": image,
              "precision": precision, "mixed": mixed_of(precision), "attention": attention,
              "optimizer": optimizer, "optimizer_impl": optimizer_impl,
              "grad_accum": grad_accum, "measured_ms": "" if measured_ms is None else "%.6g" % measured_ms,
              "measures": measures, "trace": trace}
    return {k: values[k] for k in COLUMNS if values[k] is not None}


def header_of(rows):
    """The columns some row has a value for, in COLUMNS' order."""
    present = set()
    for r in rows:
        present.update(r)
    unknown = present - set(COLUMNS)
    if unknown:
        raise HarnessError("unknown columns: %s" % ", ".join(sorted(unknown)))
    return [c for c in COLUMNS if c in present]


def write_csv(stream, rows, columns=None, header=True):
    """Writes the rows under `columns` (default: header_of(rows)), the header line first unless `header` is
    False (appending to a file that has one)."""
    columns = header_of(rows) if columns is None else columns
    w = csv.writer(stream, lineterminator="\n")
    if header:
        w.writerow(columns)
    for r in rows:
        missing = set(r) - set(columns)
        if missing:
            raise HarnessError("the CSV's header has no column for %s" % ", ".join(sorted(missing)))
        w.writerow(["" if r.get(c) is None else r[c] for c in columns])


def append_csv(path, rows):
    """Adds rows to the CSV at `path`. A new or empty file gets the rows' header; a row with a value for a column
    the file lacks (a vision model's image in a file of language models) widens the file's header, its rows
    rewritten with that cell empty. A file with columns that are not the harness's is refused."""
    existing, old_rows = None, []
    if os.path.exists(path) and os.path.getsize(path) > 0:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            existing = reader.fieldnames
            old_rows = list(reader)
    if not existing:
        with open(path, "a", newline="") as f:
            write_csv(f, rows)
        return
    if set(existing) - set(COLUMNS):
        raise HarnessError("%s has columns the harness does not write (%s); write these rows to another file" % (
            path, ", ".join(sorted(set(existing) - set(COLUMNS)))))
    wanted = header_of(rows + [dict.fromkeys(existing)])
    if wanted == list(existing):
        with open(path, "a", newline="") as f:
            write_csv(f, rows, existing, header=False)
        return
    with open(path, "w", newline="") as f:  # a wider header: the file rewritten
        write_csv(f, old_rows + rows, wanted)


def seq_limit(config):
    """The longest sequence a Hugging Face config's learned position table holds (GPT-2, OPT), else None
    (rotary and relative positions extend)."""
    if config.get("model_type") == "gpt2":
        return config.get("n_positions", 1024)
    if config.get("model_type") == "opt":
        return config.get("max_position_embeddings", 2048)
    return None


def path_column(path, csv_path):
    """A file's path as `prenet calibrate` resolves it: relative to the CSV's folder when the CSV's place is
    known (--append), else absolute."""
    if csv_path:
        return os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(csv_path)))
    return os.path.abspath(path)


def model_column(model, config, csv_path):
    """The row's `model`: the zoo id, or the config's path (path_column)."""
    return model if model else path_column(config, csv_path)


def hardware_column(hardware, csv_path):
    """The row's `hardware`: an id, or the path of a spec JSON given to --hardware (path_column)."""
    if hardware.endswith(".json") and os.path.isfile(hardware):
        return path_column(hardware, csv_path)
    return hardware


def predict_flags(r):
    """`prenet predict` arguments that ask for the run a row measured (its settings as flags)."""
    args = []
    for k in COLUMNS:
        if k in ("measured_ms", "measures") or r.get(k) in (None, ""):
            continue
        args += ["--" + k.replace("_", "-"), str(r[k])]
    return args


# ---- timing ----

def median_of_warm(times_s, warmup):
    """The median of the steps after the first `warmup`, in ms (a step's time in seconds each)."""
    timed = list(times_s)[warmup:]
    if not timed:
        raise HarnessError("no timed steps after %d warm-up steps" % warmup)
    return 1000.0 * statistics.median(timed)
