#!/usr/bin/env python3
"""Times whole training steps in PyTorch on the device this runs on, as rows to check or calibrate PreNeT with.

Two modes.

One model (`--model` or `--config`): the measurements CSV `prenet calibrate --measurements` reads (issue #28),
on any CUDA, ROCm, MPS or CPU device:

    python3 tools/measure/measure_steps.py --model llama3-8b --batch 1 --seq 4096 --precision bf16 --steps 20 > my.csv
    python3 tools/measure/measure_steps.py --model resnet50 --batch 64 --precision fp16 --append my.csv
    python3 tools/measure/measure_steps.py --config config.json --seq 2048 --precision bf16 --device mps --hardware ID

  The CSV's columns are `prenet predict`'s option names (model, hardware, batch, seq or image, precision, mixed,
  attention, optimizer, optimizer_impl, grad_accum) with the settings the run had, then `measured_ms` (the
  median of `--steps` timed steps after `--warmup` discarded ones, each timed from one synchronisation of the
  device to the next) and `measures` (`step`: forward, backward and the optimizer; with `--forward-backward`
  a second row, `forward_backward`, times the step without the optimizer). The model is built from its
  architecture alone, nothing downloaded, and runs in train mode on random inputs already on the device:
  causal language models of the zoo from the Hugging Face config PreNeT's zoo entry has (zoo_configs.json;
  `--config FILE` takes any config.json) with transformers' AutoModelForCausalLM.from_config; the zoo's
  vision models from torchvision; bert-*-pretraining as transformers' BertForPreTraining. fp16 and bf16 run
  under torch.autocast (`mixed autocast`; fp16 with a GradScaler), tf32 switches TF32 on (CUDA only), the
  attention is SDPA (`--attention flash`) or eager, and the row says which one the model actually ran.
  The hardware id is the device's name (torch.cuda.get_device_name, on ROCm too) matched against hardware/'s
  sheets; CPU and MPS, or a name no sheet fits, need `--hardware ID` (which also overrides the lookup).
  `--dry-run` writes the row with an empty measured_ms, without torch.
  `--trace FILE` (CUDA and ROCm) then profiles 3 more steps (one more run first, not recorded) with
  torch.profiler, recording shapes, into the Chrome trace FILE, and adds a row with `measures` kernels and
  `trace` FILE: `prenet calibrate` compares its kernels shape by shape (docs/calibration.md "Profiler traces").

The plan (no --model; used by run_on_device.sh on a CUDA GPU for the project's data):

    python3 tools/measure/measure_steps.py --out OUT [--budget-s 240] [--device-id ID]
    python3 tools/measure/measure_steps.py --out OUT --dry-run     # the plan only, no torch needed

  Each row is a recipe PreNeT can be asked about with the same settings: `prenet predict --model M --hardware H
  --batch B [--seq S] --precision P --optimizer O --attention eager`. Models are built from their architecture
  alone (torchvision's resnet50, transformers' BertForPreTraining at BERT-large's sizes with eager attention;
  nothing is downloaded), data are random tensors already on the GPU (no input pipeline), fp16/bf16 run under
  torch.autocast (fp16 with a GradScaler), tf32 switches TF32 on for matmuls and cuDNN, and the optimizers are
  torch's fused SGD with momentum (ResNet) and fused AdamW (BERT). A step is forward, backward, optimizer step
  and zero_grad(set_to_none); after `--warmup` steps, `--steps` are timed between two CUDA synchronisations.

  Output: OUT/steps.csv in data/published/throughput.csv's columns (role `validate`, the framework and this
  script named as the source) plus `peak_allocated_bytes` and `peak_reserved_bytes`
  (torch.cuda.max_memory_allocated / max_memory_reserved), and OUT/steps-provenance.json.
"""
import argparse
import contextlib
import csv
import json
import os
import sys
import time

import harness
from harness import HarnessError
from measure_kernels import provenance, resolve_device, set_tf32

# (model, batch, seq, precision, optimizer): what the published rows cover, on a large GPU.
PLAN = [
    ("resnet50", 256, None, "bf16", "sgd"),
    ("resnet50", 256, None, "fp16", "sgd"),
    ("resnet50", 256, None, "tf32", "sgd"),
    ("resnet50", 128, None, "fp32", "sgd"),
    ("bert-large-pretraining", 64, 128, "bf16", "adamw"),
    ("bert-large-pretraining", 64, 128, "fp16", "adamw"),
    ("bert-large-pretraining", 32, 128, "tf32", "adamw"),
    ("bert-large-pretraining", 16, 512, "bf16", "adamw"),
]
COLUMNS = ["model", "hardware", "precision", "batch", "seq", "image", "optimizer", "grad_accum", "samples_per_s",
           "framework", "source_url", "source_note", "role", "peak_allocated_bytes", "peak_reserved_bytes"]


def build(model, batch, seq):
    """(module, a function of the module giving the loss), on the GPU."""
    import torch
    if model == "resnet50":
        import torchvision
        net = torchvision.models.resnet50(weights=None).cuda().to(memory_format=torch.channels_last)
        x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (batch,), device="cuda")
        return net, lambda m: torch.nn.functional.cross_entropy(m(x), y)
    from transformers import BertConfig, BertForPreTraining
    config = BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                        intermediate_size=4096, max_position_embeddings=512)
    try:  # transformers >= 4.36 takes the attention implementation here; older ones run eager anyway
        net = BertForPreTraining._from_config(config, attn_implementation="eager").cuda()
    except (TypeError, AttributeError, ValueError):
        net = BertForPreTraining(config).cuda()
    ids = torch.randint(0, 30522, (batch, seq), device="cuda")
    labels = torch.randint(0, 30522, (batch, seq), device="cuda")
    nsp = torch.randint(0, 2, (batch,), device="cuda")
    return net, lambda m: m(input_ids=ids, labels=labels, next_sentence_label=nsp).loss


def measure(model, batch, seq, precision, optimizer, warmup, steps):
    import torch
    set_tf32(precision == "tf32")
    torch.backends.cudnn.benchmark = True
    net, loss_of = build(model, batch, seq)
    make = (lambda **kw: torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, **kw)) if optimizer == "sgd" else \
        (lambda **kw: torch.optim.AdamW(net.parameters(), lr=1e-4, **kw))
    try:
        opt = make(fused=True)
    except (TypeError, RuntimeError):  # a PyTorch without the fused kernel for this optimizer
        opt = make(foreach=True)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def step():
        with torch.autocast("cuda", dtype=half or torch.float32, enabled=half is not None):
            loss = loss_of(net)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.time()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    elapsed = time.time() - start
    result = {"rate": batch * steps / elapsed, "allocated": torch.cuda.max_memory_allocated(),
              "reserved": torch.cuda.max_memory_reserved(),
              "impl": "fused" if opt.defaults.get("fused") else "foreach",
              "attention": getattr(net.config, "_attn_implementation", None)}
    del net, opt
    torch.cuda.empty_cache()
    return result


def plan_main(a, argv):
    """The fixed plan of ResNet-50 and BERT-large recipes (the mode without --model)."""
    device = resolve_device("measure_steps", a.device_id, a.dry_run)
    framework = "PyTorch eager (dry run)"
    if not a.dry_run:
        import torch
        framework = "PyTorch %s eager (CUDA %s)" % (torch.__version__, torch.version.cuda)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "steps-provenance.json"), "w") as f:
        json.dump(provenance(device, argv) if not a.dry_run else {"dry_run": True}, f, indent=1)
    started = time.time()
    with open(os.path.join(a.out, "steps.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for model, batch, seq, precision, optimizer in PLAN:
            if time.time() - started > a.budget_s:
                print("measure_steps: budget spent, stopping before", model, precision, file=sys.stderr)
                break
            r = {"rate": None, "allocated": None, "reserved": None, "impl": "fused", "attention": "eager"}
            if not a.dry_run:
                try:
                    r = measure(model, batch, seq, precision, optimizer, a.warmup, a.steps)
                except Exception as e:  # out of memory or a missing package: report and go on
                    print("measure_steps: %s b%d %s failed: %s" % (model, batch, precision, e), file=sys.stderr)
                    continue
            amp = {"fp16": "torch.autocast fp16 + GradScaler", "bf16": "torch.autocast bf16"}.get(
                precision, "TF32 matmuls and convolutions" if precision == "tf32" else "fp32")
            detail = "channels-last" if model == "resnet50" else "%s attention, MLM + NSP loss" % r["attention"]
            note = "synthetic data on the GPU, %d warm-up + %d timed steps, %s, %s %s, %s" % (
                a.warmup, a.steps, amp, r["impl"], optimizer, detail)
            w.writerow([model, device, precision, batch, seq or "", 224 if model == "resnet50" else "", optimizer,
                        "", "" if r["rate"] is None else "%.2f" % r["rate"], framework,
                        "tools/measure/measure_steps.py", note, "validate", r["allocated"] or "", r["reserved"] or ""])
            f.flush()
    print("measure_steps: wrote %s in %.0f s" % (os.path.join(a.out, "steps.csv"), time.time() - started))
    return 0


# ---- one model: a measurements CSV for `prenet calibrate` (torch is imported only when measuring) ----

def pick_backend(requested):
    """'cuda' (NVIDIA, or AMD through ROCm: torch.version.hip), 'mps' or 'cpu': `requested`, or with auto the
    first of them this PyTorch has."""
    import torch
    has_cuda = torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None)
    has_mps = bool(mps is not None and mps.is_available())
    if requested == "auto":
        return "cuda" if has_cuda else "mps" if has_mps else "cpu"
    if requested == "cuda" and not has_cuda:
        raise HarnessError("measure_steps: --device cuda, but this PyTorch (%s) sees no CUDA or ROCm device" %
                           torch.__version__)
    if requested == "mps" and not has_mps:
        raise HarnessError("measure_steps: --device mps, but this PyTorch (%s) has no MPS device" % torch.__version__)
    return requested


def device_name(backend):
    """The name the driver reports (CUDA and ROCm), else a description for the log."""
    import platform
    import torch
    if backend == "cuda":
        return torch.cuda.get_device_name(0)
    if backend == "mps":
        return "Apple MPS (%s)" % platform.machine()
    return "CPU (%s)" % (platform.processor() or platform.machine())


def runtime_label(backend):
    import torch
    if backend == "cuda":
        hip = getattr(torch.version, "hip", None)
        return "ROCm/HIP %s" % hip if hip else "CUDA %s" % torch.version.cuda
    return backend.upper()


def synchronizer(backend):
    """A function that returns once every kernel queued on the device has finished (CPU ops are synchronous)."""
    import torch
    if backend == "cuda":  # on ROCm as well: torch.cuda is HIP there
        return torch.cuda.synchronize
    if backend == "mps":
        return torch.mps.synchronize
    return lambda: None


def hf_model(cls, config, attention):
    """A Hugging Face model built from `config` with the attention asked for; (model, the implementation it
    runs). A transformers too old to take attn_implementation runs eager, and says so."""
    want = harness.hf_attention_request(attention)
    auto = cls.__name__.startswith("Auto")  # AutoModelForCausalLM.from_config; a model class's _from_config
    try:
        net = cls.from_config(config, attn_implementation=want) if auto else \
            cls._from_config(config, attn_implementation=want)
    except TypeError:  # transformers < 4.36
        net = cls.from_config(config) if auto else cls(config)
    return net, getattr(net.config, "_attn_implementation", "eager")


def build_model(kind, a, configs, dev):
    """(module in train mode on `dev`, a function of it giving the loss, its attention as prenet names it)."""
    import torch
    if kind == "vision":
        import torchvision
        image = a.image or 224
        kw = {"image_size": image} if a.model == "vit-b16" else {}
        net = getattr(torchvision.models, harness.VISION_MODELS[a.model])(weights=None, **kw)
        x = torch.randn(a.batch, 3, image, image, device=dev)
        y = torch.randint(0, 1000, (a.batch,), device=dev)
        # torchvision's ViT calls nn.MultiheadAttention with need_weights=False: SDPA, one fused kernel.
        attention = "flash" if a.model == "vit-b16" else None
        return net.to(dev).train(), (lambda m: torch.nn.functional.cross_entropy(m(x), y)), attention
    if kind == "bert":
        from transformers import BertConfig, BertForPreTraining
        config = BertConfig(vocab_size=30522, max_position_embeddings=512, **harness.BERT_PRETRAINING[a.model])
        net, impl = hf_model(BertForPreTraining, config, a.attention)
        ids = torch.randint(0, config.vocab_size, (a.batch, a.seq), device=dev)
        nsp = torch.randint(0, 2, (a.batch,), device=dev)
        return net.to(dev).train(), (lambda m: m(input_ids=ids, labels=ids, next_sentence_label=nsp).loss), \
            harness.attention_of(impl)
    from transformers import AutoConfig, AutoModelForCausalLM
    doc = dict(configs[a.model]) if a.model else json.load(open(a.config))
    doc.pop("attn_implementation", None)
    doc.pop("_attn_implementation", None)
    config = AutoConfig.for_model(doc.pop("model_type"), **doc)
    net, impl = hf_model(AutoModelForCausalLM, config, a.attention)
    ids = torch.randint(0, config.vocab_size, (a.batch, a.seq), device=dev)
    return net.to(dev).train(), (lambda m: m(input_ids=ids, labels=ids, use_cache=False).loss), \
        harness.attention_of(impl)


def make_optimizer(net, name):
    """(optimizer, prenet's optimizer_impl): torch.optim's fused kernel where this PyTorch has it for the
    device, else foreach."""
    import torch
    params = [p for p in net.parameters() if p.requires_grad]
    cls = {"adamw": torch.optim.AdamW, "adam": torch.optim.Adam, "sgd": torch.optim.SGD}[name]
    kw = {"lr": 0.01, "momentum": 0.9} if name == "sgd" else {"lr": 1e-4}
    errors = []
    for impl in ("fused", "foreach"):
        try:
            return cls(params, **kw, **{impl: True}), impl
        except (TypeError, RuntimeError, ValueError) as e:
            errors.append("%s: %s" % (impl, e))
    raise HarnessError("measure_steps: no fused or foreach %s on this device (%s)" % (name, "; ".join(errors)))


def grad_scaler(backend, enabled):
    import torch
    try:
        return torch.amp.GradScaler(backend, enabled=enabled)
    except (AttributeError, TypeError):  # PyTorch < 2.3: only CUDA's
        if backend == "cuda" or not enabled:
            return torch.cuda.amp.GradScaler(enabled=enabled)
        raise HarnessError("measure_steps: this PyTorch has no GradScaler for %s; fp16 needs one" % backend)


def time_steps(fn, sync, count):
    """Seconds of each of `count` calls of fn, each from a synchronised device to a synchronised device."""
    sync()
    times = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return times


TRACED_STEPS = 3


def profile_steps(fn, path, count=TRACED_STEPS):
    """Runs fn once unrecorded, then `count` times under torch.profiler (CPU operators with their shapes, the
    GPU's kernels), each a ProfilerStep span, and writes the Chrome trace to path."""
    import torch
    prof = torch.profiler
    with prof.profile(activities=[prof.ProfilerActivity.CPU, prof.ProfilerActivity.CUDA], record_shapes=True,
                      schedule=prof.schedule(wait=0, warmup=1, active=count, repeat=1),
                      on_trace_ready=lambda p: p.export_chrome_trace(path)) as p:
        for _ in range(count + 1):
            fn()
            p.step()


def measure_model(kind, a, configs, backend):
    """{'step': [s, ...], 'forward_backward': [...] (with --forward-backward), 'attention', 'optimizer_impl'}."""
    import torch
    if backend == "cuda":
        set_tf32(a.precision == "tf32")
        torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    net, loss_of, attention = build_model(kind, a, configs, torch.device(backend))
    opt, impl = make_optimizer(net, a.optimizer)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    scaler = grad_scaler(backend, a.precision == "fp16")

    def forward_backward():
        for _ in range(a.grad_accum):
            with torch.autocast(backend, dtype=half) if half is not None else contextlib.nullcontext():
                loss = loss_of(net)
            scaler.scale(loss).backward()

    def step():
        forward_backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    def forward_backward_only():
        forward_backward()
        opt.zero_grad(set_to_none=True)

    sync = synchronizer(backend)
    result = {"attention": attention, "optimizer_impl": impl,
              "step": time_steps(step, sync, a.warmup + a.steps)}
    if a.forward_backward:
        result["forward_backward"] = time_steps(forward_backward_only, sync, a.warmup + a.steps)
    if a.trace:
        profile_steps(step, a.trace)
    return result


def model_main(a, argv):
    configs = harness.zoo_configs()
    kind = harness.check_args(a, configs)
    if kind == "causal-lm":
        doc = configs[a.model] if a.model else json.load(open(a.config))
        limit = harness.seq_limit(doc)
        if limit and a.seq > limit:
            raise HarnessError("measure_steps: --seq %d is longer than the model's %d learned positions" % (
                a.seq, limit))
    if kind == "vision" and a.attention != "flash":
        raise HarnessError("measure_steps: %s runs no eager attention; leave --attention out" % a.model)
    image = (a.image or 224) if kind == "vision" else None
    model = harness.model_column(a.model, a.config, a.append)
    settings = dict(model=model, batch=a.batch, precision=a.precision, optimizer=a.optimizer, seq=a.seq,
                    image=image, grad_accum=a.grad_accum)
    if a.trace and a.dry_run:
        raise HarnessError("measure_steps: --trace profiles a run: not with --dry-run")
    if a.dry_run:
        if not a.hardware:
            raise HarnessError("measure_steps: --dry-run needs --hardware ID (no device is looked at)")
        attention = None if kind == "vision" and a.model != "vit-b16" else a.attention
        hardware = harness.hardware_column(a.hardware, a.append)
        rows = [harness.row(hardware=hardware, optimizer_impl="fused", measured_ms=None, measures=m,
                            attention=attention, **settings)
                for m in ["step"] + (["forward_backward"] if a.forward_backward else [])]
    else:
        try:
            import torch  # noqa: F401
        except ImportError:
            raise HarnessError("measure_steps: measuring needs PyTorch (pip install torch, and transformers or "
                               "torchvision for the model); --dry-run writes the row without it")
        backend = pick_backend(a.device)
        if a.precision == "tf32" and backend != "cuda":
            raise HarnessError("measure_steps: tf32 is a CUDA setting; use fp32 on %s" % backend)
        if a.trace and backend != "cuda":
            raise HarnessError("measure_steps: --trace records the GPU's kernels: it needs a CUDA or ROCm device, "
                               "not %s" % backend)
        name = device_name(backend)
        hardware = harness.hardware_column(
            harness.resolve_hardware("measure_steps", backend, name, a.hardware, harness.load_sheets()), a.append)
        try:
            r = measure_model(kind, a, configs, backend)
        except ImportError as e:
            raise HarnessError("measure_steps: %s needs %s (pip install %s)" % (
                model, e.name or e, "torchvision" if kind == "vision" else "transformers"))
        except (RuntimeError, ValueError) as e:  # out of memory, a dtype or attention this setup lacks, ...
            raise HarnessError("measure_steps: %s on %s failed: %s" % (model, name, e))
        rows = []
        for m in ["step"] + (["forward_backward"] if a.forward_backward else []):
            ms = harness.median_of_warm(r[m], a.warmup)
            timed = [1000.0 * t for t in r[m][a.warmup:]]
            print("measure_steps: %s on %s (%s, %s, torch %s): %s median %.4g ms over %d steps (%.4g-%.4g), "
                  "%d warm-up discarded; attention %s, %s %s" % (
                      model, name, hardware, runtime_label(backend), torch.__version__, m, ms, len(timed),
                      min(timed), max(timed), a.warmup, r["attention"] or "none", r["optimizer_impl"],
                      a.optimizer), file=sys.stderr)
            rows.append(harness.row(hardware=hardware, optimizer_impl=r["optimizer_impl"], measured_ms=ms,
                                    measures=m, attention=r["attention"], **settings))
        if a.trace:
            print("measure_steps: profiled %d steps into %s" % (TRACED_STEPS, a.trace), file=sys.stderr)
            rows.append(harness.row(hardware=hardware, optimizer_impl=r["optimizer_impl"], measured_ms=None,
                                    measures="kernels", attention=r["attention"],
                                    trace=harness.path_column(a.trace, a.append), **settings))
    if a.append:
        harness.append_csv(a.append, rows)
    else:
        harness.write_csv(sys.stdout, rows)
        sys.stdout.flush()
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    one = p.add_argument_group("one model (a measurements CSV for prenet calibrate)")
    one.add_argument("--model", help="a zoo id (`prenet zoo`) the harness builds")
    one.add_argument("--config", help="a Hugging Face config.json of a causal language model")
    one.add_argument("--batch", type=int, default=1, help="samples per micro-batch (default 1)")
    one.add_argument("--seq", type=int, help="tokens per sample (language models; required)")
    one.add_argument("--image", type=int, help="image side in pixels (vision models; default 224)")
    one.add_argument("--precision", choices=harness.PRECISIONS, default="fp32")
    one.add_argument("--attention", choices=harness.ATTENTIONS, default="flash",
                     help="flash: PyTorch SDPA (default); eager: the scores materialised")
    one.add_argument("--optimizer", choices=harness.OPTIMIZERS, default="adamw")
    one.add_argument("--grad-accum", type=int, default=1, help="micro-batches per optimizer step")
    one.add_argument("--device", choices=("auto",) + harness.BACKENDS, default="auto")
    one.add_argument("--forward-backward", action="store_true",
                     help="also time forward + backward without the optimizer (a forward_backward row)")
    one.add_argument("--append", metavar="FILE", help="add the rows to FILE (its header kept) instead of stdout")
    one.add_argument("--trace", metavar="FILE",
                     help="also profile %d steps (CUDA/ROCm, shapes recorded) into the Chrome trace FILE, and add "
                          "its row (measures kernels) for prenet calibrate" % TRACED_STEPS)
    plan = p.add_argument_group("the plan (no --model: ResNet-50 and BERT-large recipes on a CUDA GPU)")
    plan.add_argument("--out", help="the plan's output folder")
    plan.add_argument("--budget-s", type=float, default=240)
    p.add_argument("--hardware", "--device-id", dest="hardware",
                   help="the hardware/ id (default: from the device's name; required on CPU and MPS)")
    p.add_argument("--dry-run", action="store_true", help="no torch: the rows with empty timings")
    p.add_argument("--warmup", type=int, default=5, help="steps run and discarded first (default 5)")
    p.add_argument("--steps", type=int, default=20, help="steps timed (default 20)")
    a = p.parse_args(argv[1:])
    if a.model or a.config:
        if a.out:
            p.error("--out is the plan's folder; one model's rows go to stdout or --append FILE")
        try:
            return model_main(a, argv)
        except HarnessError as e:
            print(str(e), file=sys.stderr)
            return 2
    if not a.out:
        p.error("give --model (or --config) to measure one model, or --out for the plan")
    if a.trace:
        p.error("--trace profiles one model's run (--model or --config), not the plan")
    a.device_id = a.hardware
    return plan_main(a, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
