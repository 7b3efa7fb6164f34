"""tools/measure's step harness (issue #28: `measure_steps.py --model` writes a measurements CSV for
`prenet calibrate`). Runs without torch: the device-name lookup, the rows and their CSV, the median of the warm
steps, the argument checks, the --dry-run's rows. With torch (and transformers) installed it also measures a
tiny Llama on the CPU end to end; without, those tests are skipped and say so.

    python3 -m unittest discover -s tests/python -p 'test_measure_harness.py' -v

tests/js/measure-harness.test.mjs runs this in the JS suite. PRENET names the prenet binary (default
build/prenet); the tests that ask it are skipped when there is none.
"""
import argparse
import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools", "measure")
sys.path.insert(0, TOOLS)

import harness  # noqa: E402
from harness import HarnessError  # noqa: E402

SCRIPT = os.path.join(TOOLS, "measure_steps.py")
TINY = os.path.join(ROOT, "tests", "fixtures", "measure", "tiny-llama.json")
PRENET = os.environ.get("PRENET") or os.path.join(ROOT, "build", "prenet")
HAVE_PRENET = os.path.isfile(PRENET) and os.access(PRENET, os.X_OK)
HAVE = {m: importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "torchvision")}
NO_TORCH = "torch is not installed: the end-to-end CPU measurement is skipped (pip install torch transformers)"
NO_PRENET = "no prenet binary at %s (scripts/build.sh native, or set PRENET)" % PRENET

# What measure_kernels.py listed by hand before the rule: the rule must give the same ids.
REPORTED_NAMES = {
    "NVIDIA H200": "h200-sxm-141gb",
    "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb",
    "NVIDIA H100 PCIe": "h100-pcie-80gb",
    "NVIDIA A100-SXM4-80GB": "a100-sxm4-80gb",
    "NVIDIA A100-SXM4-40GB": "a100-sxm4-40gb",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
    "NVIDIA A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA L4": "l4",
    "NVIDIA L40S": "l40s",
    "NVIDIA A10": "a10",
    "NVIDIA B200": "b200",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA GeForce RTX 3090": "rtx-3090",
    "NVIDIA RTX 6000 Ada Generation": "rtx-6000-ada",
    "NVIDIA RTX A6000": "rtx-a6000",
    "Tesla V100-SXM2-16GB": "v100-sxm2-16gb",
    "Tesla V100-SXM2-32GB": "v100-sxm2-32gb",
    "Tesla V100-PCIE-32GB": "v100-pcie-32gb",
    "Tesla T4": "t4",
    # ROCm's torch.cuda.get_device_name
    "AMD Instinct MI300X": "mi300x",
    "AMD Instinct MI210": "mi210",
    "AMD Instinct MI100": "mi100",
}


def run_script(*args):
    return subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True, text=True, timeout=600)


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def args(**kw):
    base = dict(model=None, config=None, batch=1, seq=None, image=None, precision="fp32", device="auto",
                optimizer="adamw", attention="flash", steps=20, warmup=5, grad_accum=1)
    base.update(kw)
    return argparse.Namespace(**base)


class DeviceIds(unittest.TestCase):
    sheets = harness.load_sheets()

    def test_sheets_are_read_from_hardware(self):
        ids = {sid for sid, _ in self.sheets}
        self.assertIn("h200-sxm-141gb", ids)
        self.assertIn("mi300x", ids)
        self.assertGreater(len(ids), 30)

    def test_reported_names_resolve_to_the_ids_they_are(self):
        for name, want in REPORTED_NAMES.items():
            self.assertEqual(harness.device_id_from_name(name, self.sheets), want, name)

    def test_a_different_or_ambiguous_device_is_not_guessed(self):
        for name in ["NVIDIA GeForce RTX 3090 Ti", "NVIDIA H100", "NVIDIA H100 NVL", "AMD Instinct MI250X",
                     "NVIDIA A10G", "", "NVIDIA"]:
            self.assertIsNone(harness.device_id_from_name(name, self.sheets), name)

    def test_an_id_is_its_own_name(self):
        self.assertEqual(harness.device_id_from_name("rtx-4090", self.sheets), "rtx-4090")

    def test_tokens_ignore_vendor_words_and_separators(self):
        self.assertEqual(harness.name_tokens("NVIDIA A100-SXM4-80GB"), {"a100", "sxm4", "80gb"})
        self.assertEqual(harness.name_tokens("Tesla V100-PCIE-32GB"), {"v100", "pcie", "32gb"})

    def test_cpu_and_mps_need_hardware(self):
        for backend in ("cpu", "mps"):
            with self.assertRaises(HarnessError) as e:
                harness.resolve_hardware("measure_steps", backend, "whatever", None, self.sheets)
            self.assertIn("--hardware", str(e.exception))
            self.assertEqual(harness.resolve_hardware("measure_steps", backend, "x", "t4", self.sheets), "t4")

    def test_an_unknown_gpu_is_a_clear_error_naming_near_sheets(self):
        with self.assertRaises(HarnessError) as e:
            harness.resolve_hardware("measure_steps", "cuda", "NVIDIA GeForce RTX 3090 Ti", None, self.sheets)
        self.assertIn("unknown device 'NVIDIA GeForce RTX 3090 Ti'", str(e.exception))
        self.assertIn("--hardware", str(e.exception))
        self.assertIn("rtx-3090", str(e.exception))

    def test_hardware_overrides_the_name(self):
        self.assertEqual(harness.resolve_hardware("m", "cuda", "NVIDIA H200", "h100-sxm5-80gb", self.sheets),
                         "h100-sxm5-80gb")
        self.assertEqual(harness.resolve_hardware("m", "cuda", "NVIDIA H200", None, self.sheets), "h200-sxm-141gb")

    def test_measure_kernels_uses_the_same_rule(self):
        import measure_kernels
        self.assertFalse(hasattr(measure_kernels, "DEVICE_IDS"), "one table of device names, in harness.py")
        self.assertIs(measure_kernels.resolve_hardware, harness.resolve_hardware)


class Rows(unittest.TestCase):
    def test_a_row_has_the_run_settings_under_prenet_option_names(self):
        r = harness.row(model="llama3-8b", hardware="h200-sxm-141gb", batch=1, seq=4096, precision="bf16",
                        optimizer="adamw", optimizer_impl="fused", measured_ms=812.34567, attention="flash")
        self.assertEqual(list(r), ["model", "hardware", "batch", "seq", "precision", "mixed", "attention",
                                   "optimizer", "optimizer_impl", "grad_accum", "measured_ms", "measures"])
        self.assertEqual(r["mixed"], "autocast")
        self.assertEqual(r["measured_ms"], "812.346")
        self.assertEqual(r["measures"], "step")

    def test_mixed_is_written_only_for_half_precision(self):
        self.assertEqual(harness.mixed_of("fp16"), "autocast")
        self.assertEqual(harness.mixed_of("bf16"), "autocast")
        self.assertIsNone(harness.mixed_of("fp32"))
        self.assertIsNone(harness.mixed_of("tf32"))
        r = harness.row(model="resnet50", hardware="t4", batch=32, image=224, precision="fp32", optimizer="sgd",
                        optimizer_impl="foreach", measured_ms=10)
        self.assertNotIn("mixed", r)
        self.assertNotIn("attention", r)
        self.assertNotIn("seq", r)

    def test_bad_times_and_measures_are_refused(self):
        base = dict(model="gpt2", hardware="t4", batch=1, seq=8, precision="fp32", optimizer="adamw",
                    optimizer_impl="fused")
        for bad in (0, -1.0, float("nan")):
            with self.assertRaises(HarnessError):
                harness.row(measured_ms=bad, **base)
        with self.assertRaises(HarnessError):
            harness.row(measured_ms=1, measures="forward_only", **base)
        self.assertEqual(harness.row(measured_ms=None, **base)["measured_ms"], "")  # a --dry-run plan

    def test_attention_names(self):
        self.assertEqual(harness.attention_of("sdpa"), "flash")
        self.assertEqual(harness.attention_of("flash_attention_2"), "flash")
        self.assertEqual(harness.attention_of("eager"), "eager")
        self.assertIsNone(harness.attention_of(None))
        with self.assertRaises(HarnessError):
            harness.attention_of("flex_attention")
        self.assertEqual(harness.hf_attention_request("flash"), "sdpa")

    def test_csv_header_and_append(self):
        a = harness.row(model="gpt2", hardware="t4", batch=1, seq=8, precision="fp32", optimizer="adamw",
                        optimizer_impl="fused", measured_ms=2)
        b = dict(a, measured_ms="3", measures="forward_backward")
        out = io.StringIO()
        harness.write_csv(out, [a, b])
        rows = read_csv(out.getvalue())
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[1]["measures"], "forward_backward")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "my.csv")
            harness.append_csv(path, [a])
            harness.append_csv(path, [b])
            with open(path) as f:
                text = f.read()
            self.assertEqual(text.count("model,"), 1, text)  # one header
            self.assertEqual([r["measured_ms"] for r in read_csv(text)], ["2", "3"])
            vision = harness.row(model="resnet50", hardware="t4", batch=8, image=224, precision="fp32",
                                 optimizer="sgd", optimizer_impl="fused", measured_ms=5)
            harness.append_csv(path, [vision])  # the header widens to image
            with open(path) as f:
                rows = read_csv(f.read())
            self.assertEqual([(r["model"], r["seq"], r["image"]) for r in rows],
                             [("gpt2", "8", ""), ("gpt2", "8", ""), ("resnet50", "", "224")])
            self.assertEqual(rows[0]["measured_ms"], "2")
            other = os.path.join(d, "other.csv")
            with open(other, "w") as f:
                f.write("model,samples_per_s\ngpt2,3\n")
            with self.assertRaises(HarnessError) as e:
                harness.append_csv(other, [a])
            self.assertIn("samples_per_s", str(e.exception))
            with open(other) as f:
                self.assertEqual(f.read(), "model,samples_per_s\ngpt2,3\n")  # nothing written

    def test_unknown_columns_are_refused(self):
        with self.assertRaises(HarnessError):
            harness.header_of([{"model": "gpt2", "samples_per_s": 3}])

    def test_config_path_is_relative_to_the_csv(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "configs"))
            config = os.path.join(d, "configs", "c.json")
            self.assertEqual(harness.model_column(None, config, os.path.join(d, "my.csv")),
                             os.path.join("configs", "c.json"))
            self.assertEqual(harness.model_column(None, config, None), os.path.abspath(config))
        self.assertEqual(harness.model_column("gpt2", None, "x.csv"), "gpt2")

    def test_a_spec_file_as_hardware_is_a_path_relative_to_the_csv(self):
        with tempfile.TemporaryDirectory() as d:
            spec = os.path.join(d, "my-gpu.json")
            with open(spec, "w") as f:
                f.write("{}")
            self.assertEqual(harness.hardware_column(spec, os.path.join(d, "runs", "my.csv")),
                             os.path.join("..", "my-gpu.json"))
            self.assertEqual(harness.hardware_column(spec, None), os.path.abspath(spec))
        self.assertEqual(harness.hardware_column("rtx-4090", "my.csv"), "rtx-4090")

    def test_predict_flags(self):
        r = {"model": "gpt2", "hardware": "t4", "seq": "8", "grad_accum": "2", "optimizer_impl": "foreach",
             "image": "", "measured_ms": "3", "measures": "step"}
        self.assertEqual(harness.predict_flags(r), ["--model", "gpt2", "--hardware", "t4", "--seq", "8",
                                                    "--optimizer-impl", "foreach", "--grad-accum", "2"])


class Median(unittest.TestCase):
    def test_warm_up_steps_are_discarded(self):
        self.assertEqual(harness.median_of_warm([9.0, 9.0, 0.001, 0.003, 0.002], 2), 2.0)

    def test_even_count_and_milliseconds(self):
        self.assertAlmostEqual(harness.median_of_warm([0.010, 0.020, 0.030, 0.040], 0), 25.0)

    def test_nothing_left_to_time(self):
        with self.assertRaises(HarnessError):
            harness.median_of_warm([0.1, 0.2], 2)


class Arguments(unittest.TestCase):
    configs = harness.zoo_configs()

    def check(self, **kw):
        return harness.check_args(args(**kw), self.configs)

    def refused(self, fragment, **kw):
        with self.assertRaises(HarnessError) as e:
            self.check(**kw)
        self.assertIn(fragment, str(e.exception))

    def test_kinds(self):
        self.assertEqual(self.check(model="llama3-8b", seq=4096), "causal-lm")
        self.assertEqual(self.check(model="resnet50"), "vision")
        self.assertEqual(self.check(model="bert-large-pretraining", seq=128), "bert")
        self.assertEqual(self.check(config=TINY, seq=32), "causal-lm")

    def test_refusals(self):
        self.refused("one of --model", model="gpt2", config=TINY, seq=8)
        self.refused("one of --model")
        self.refused("needs --seq", model="llama3-8b")
        self.refused("--image, not --seq", model="resnet50", seq=8)
        self.refused("--seq, not --image", model="gpt2", seq=8, image=224)
        self.refused("--batch must be at least 1", model="gpt2", seq=8, batch=0)
        self.refused("--grad-accum must be at least 1", model="gpt2", seq=8, grad_accum=0)
        self.refused("--warmup", model="gpt2", seq=8, warmup=-1)
        self.refused("tf32 is a CUDA setting", model="gpt2", seq=8, precision="tf32", device="cpu")
        self.refused("cannot build 'llama3-70bb'", model="llama3-70bb", seq=8)
        self.refused("no such file", config="/nonexistent/config.json", seq=8)

    def test_learned_positions_limit_the_sequence(self):
        self.assertEqual(harness.seq_limit(self.configs["gpt2"]), 1024)
        self.assertEqual(harness.seq_limit(self.configs["opt-1.3b"]), 2048)
        self.assertIsNone(harness.seq_limit(self.configs["llama3-8b"]))


class Script(unittest.TestCase):
    """measure_steps.py as a command, without torch (--dry-run, and the errors before any measuring)."""

    def test_the_issue_command_dry_run(self):
        r = run_script("--model", "llama3-8b", "--batch", "1", "--seq", "4096", "--precision", "bf16",
                       "--steps", "20", "--dry-run", "--hardware", "h200-sxm-141gb")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(r.stdout)
        self.assertEqual(rows, [{"model": "llama3-8b", "hardware": "h200-sxm-141gb", "batch": "1", "seq": "4096",
                                 "precision": "bf16", "mixed": "autocast", "attention": "flash",
                                 "optimizer": "adamw", "optimizer_impl": "fused", "grad_accum": "1",
                                 "measured_ms": "", "measures": "step"}])

    def test_forward_backward_and_append(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "my.csv")
            for model in ("gpt2", "qwen2.5-0.5b"):
                r = run_script("--model", model, "--seq", "128", "--forward-backward", "--dry-run", "--hardware",
                               "t4", "--append", path)
                self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                rows = read_csv(f.read())
            self.assertEqual([(r["model"], r["measures"]) for r in rows], [
                ("gpt2", "step"), ("gpt2", "forward_backward"), ("qwen2.5-0.5b", "step"),
                ("qwen2.5-0.5b", "forward_backward")])

    def test_errors_are_messages_not_tracebacks(self):
        for argv, fragment in [
                (["--model", "llama3-8b", "--dry-run", "--hardware", "t4"], "needs --seq"),
                (["--model", "llama3-8b", "--seq", "8", "--dry-run"], "--dry-run needs --hardware"),
                (["--model", "gpt2", "--seq", "4096", "--dry-run", "--hardware", "t4"], "1024 learned positions"),
                (["--model", "resnet50", "--attention", "eager", "--dry-run", "--hardware", "t4"], "no eager"),
                (["--model", "nope", "--seq", "8", "--dry-run", "--hardware", "t4"], "cannot build 'nope'")]:
            r = run_script(*argv)
            self.assertEqual(r.returncode, 2, argv)
            self.assertIn(fragment, r.stderr, argv)
            self.assertNotIn("Traceback", r.stderr, argv)

    @unittest.skipIf(HAVE["torch"], "torch is installed: the no-torch message is not shown")
    def test_measuring_without_torch_says_what_to_install(self):
        r = run_script("--model", "gpt2", "--seq", "8", "--device", "cpu", "--hardware", "t4")
        self.assertEqual(r.returncode, 2)
        self.assertIn("needs PyTorch", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_the_plan_mode_still_runs(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_script("--out", d, "--dry-run", "--device-id", "h200-sxm-141gb")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "steps.csv")) as f:
                self.assertGreaterEqual(len(read_csv(f.read())), 6)


def stand_in_torch(cuda_name=None, hip=None, mps=False, fused=True, attn="sdpa"):
    """(torch, transformers, log): minimal stand-ins with what measure_steps.py's model mode calls, recording
    the calls in `log`, so that its control flow runs where torch is not installed. What is timed is nothing;
    that the calls are the right ones is what is checked."""
    import contextlib
    import types
    log = []
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0-stand-in"
    torch.version = types.SimpleNamespace(cuda="12.4" if cuda_name and not hip else None, hip=hip)
    torch.bfloat16, torch.float16, torch.float32 = "bf16", "fp16", "fp32"
    torch.cuda = types.SimpleNamespace(is_available=lambda: cuda_name is not None,
                                       get_device_name=lambda i=0: cuda_name,
                                       synchronize=lambda: log.append("cuda.sync"))
    torch.mps = types.SimpleNamespace(synchronize=lambda: log.append("mps.sync"))
    matmul = types.SimpleNamespace(fp32_precision="ieee")
    torch.backends = types.SimpleNamespace(mps=types.SimpleNamespace(is_available=lambda: mps),
                                           cuda=types.SimpleNamespace(matmul=matmul),
                                           cudnn=types.SimpleNamespace(benchmark=False, conv=types.SimpleNamespace(
                                               fp32_precision="ieee")))
    torch.manual_seed = lambda s: None
    torch.device = lambda d: d
    torch.randint = lambda lo, hi, shape, device=None: ("ints", shape, device)
    torch.randn = lambda *shape, device=None: ("floats", shape, device)

    @contextlib.contextmanager
    def autocast(backend, dtype=None):
        log.append("autocast %s %s" % (backend, dtype))
        yield
    torch.autocast = autocast

    class Loss:
        def backward(self):
            log.append("backward")

    class Optimizer:
        def __init__(self, params, lr, momentum=None, fused=None, foreach=None):
            if fused and not fused_ok:
                raise RuntimeError("no fused kernel here")
            self.impl = "fused" if fused else "foreach"

        def zero_grad(self, set_to_none=False):
            log.append("zero_grad")
    fused_ok = fused
    torch.optim = types.SimpleNamespace(AdamW=Optimizer, Adam=Optimizer, SGD=Optimizer)

    class GradScaler:
        def __init__(self, backend, enabled=True):
            log.append("scaler %s %s" % (backend, enabled))

        def scale(self, loss):
            return loss

        def step(self, opt):
            log.append("optimizer.step")

        def update(self):
            pass
    torch.amp = types.SimpleNamespace(GradScaler=GradScaler)

    class Net:
        def __init__(self, config):
            self.config = config
            config._attn_implementation = attn

        def to(self, dev):
            log.append("to %s" % dev)
            return self

        def train(self):
            return self

        def parameters(self):
            return [types.SimpleNamespace(requires_grad=True)]

        def __call__(self, input_ids, labels, use_cache):
            log.append("forward %s" % (input_ids[1],))
            return types.SimpleNamespace(loss=Loss())

    class AutoModelForCausalLM:
        @staticmethod
        def from_config(config, attn_implementation=None):
            log.append("attn asked %s" % attn_implementation)
            return Net(config)

    class AutoConfig:
        @staticmethod
        def for_model(model_type, **doc):
            return types.SimpleNamespace(model_type=model_type, **doc)

    class Profile:
        """torch.profiler.profile: its export writes one recorded bf16 GEMM call per active step."""
        def __init__(self, activities, record_shapes, schedule, on_trace_ready):
            log.append("profile %s shapes %s" % ("+".join(activities), record_shapes))
            self.schedule, self.ready = schedule, on_trace_ready

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.ready(self)
            return False

        def step(self):
            log.append("profiler.step")

        def export_chrome_trace(self, path):
            events = []
            for n in range(self.schedule["active"]):
                events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (n + 1), "dur": 1})
                events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "dur": 4, "args": {
                    "External id": n + 1, "Input Dims": [[64, 4096], [4096, 4096]],
                    "Input type": ["c10::BFloat16", "c10::BFloat16"], "Concrete Inputs": ["", ""]}})
                events.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16", "dur": 20,
                               "args": {"External id": n + 1}})
            with open(path, "w") as f:
                json.dump({"traceEvents": events}, f)
    torch.profiler = types.SimpleNamespace(
        profile=Profile, ProfilerActivity=types.SimpleNamespace(CPU="CPU", CUDA="CUDA"),
        schedule=lambda wait, warmup, active, repeat: dict(wait=wait, warmup=warmup, active=active, repeat=repeat))

    transformers = types.ModuleType("transformers")
    transformers.AutoConfig, transformers.AutoModelForCausalLM = AutoConfig, AutoModelForCausalLM
    return torch, transformers, log


class WithAStandInTorch(unittest.TestCase):
    """measure_steps.py's model mode run in this process on stand-in torch and transformers modules: the device
    looked up, the synchronisation of its backend after every step, warm-up steps run and discarded, the
    attention and optimizer that ran written into the row."""

    def run_main(self, argv, **stand_in):
        import contextlib
        import measure_steps
        torch, transformers, log = stand_in_torch(**stand_in)
        saved = {m: sys.modules.get(m) for m in ("torch", "transformers")}
        sys.modules.update(torch=torch, transformers=transformers)
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = measure_steps.main(["measure_steps.py"] + argv)
        finally:
            for m, mod in saved.items():
                if mod is None:
                    sys.modules.pop(m, None)
                else:
                    sys.modules[m] = mod
        return rc, read_csv(out.getvalue()), err.getvalue(), log

    def test_a_cuda_gpu_is_looked_up_and_synchronised_every_step(self):
        rc, rows, err, log = self.run_main(["--model", "llama3-8b", "--seq", "64", "--precision", "bf16",
                                            "--steps", "3", "--warmup", "2"], cuda_name="NVIDIA H200")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(rows), 1)
        self.assertEqual({k: rows[0][k] for k in ("model", "hardware", "precision", "mixed", "attention",
                                                  "optimizer_impl", "measures")},
                         {"model": "llama3-8b", "hardware": "h200-sxm-141gb", "precision": "bf16",
                          "mixed": "autocast", "attention": "flash", "optimizer_impl": "fused", "measures": "step"})
        self.assertGreater(float(rows[0]["measured_ms"]), 0)
        self.assertEqual(log.count("optimizer.step"), 5)  # 2 warm-up + 3 timed
        self.assertEqual(log.count("cuda.sync"), 1 + 5)  # before the first step and after each
        self.assertIn("attn asked sdpa", log)
        self.assertIn("autocast cuda bf16", log)
        self.assertIn("to cuda", log)
        self.assertIn("CUDA 12.4", err)
        self.assertIn("over 3 steps", err)

    def test_rocm_names_its_runtime_and_eager_is_written_when_it_ran(self):
        rc, rows, err, log = self.run_main(["--model", "gpt2", "--seq", "64", "--attention", "eager", "--steps",
                                            "2", "--warmup", "0", "--forward-backward", "--grad-accum", "2"],
                                           cuda_name="AMD Instinct MI300X", hip="6.2", attn="eager")
        self.assertEqual(rc, 0, err)
        self.assertEqual([(r["hardware"], r["attention"], r["measures"], r["grad_accum"]) for r in rows],
                         [("mi300x", "eager", "step", "2"), ("mi300x", "eager", "forward_backward", "2")])
        self.assertIn("ROCm/HIP 6.2", err)
        self.assertEqual(log.count("forward (1, 64)"), 2 * 2 + 2 * 2)  # 2 micro-batches in each of 4 runs
        self.assertEqual(log.count("optimizer.step"), 2)  # forward_backward runs no optimizer

    def test_mps_needs_hardware_then_synchronises_mps(self):
        rc, rows, err, log = self.run_main(["--model", "qwen2.5-0.5b", "--seq", "16", "--device", "mps"], mps=True)
        self.assertEqual(rc, 2)
        self.assertIn("--hardware", err)
        rc, rows, err, log = self.run_main(["--model", "qwen2.5-0.5b", "--seq", "16", "--device", "mps",
                                            "--hardware", "rtx-4090", "--precision", "fp16", "--steps", "1",
                                            "--warmup", "1"], mps=True, fused=False)
        self.assertEqual(rc, 0, err)
        self.assertEqual((rows[0]["hardware"], rows[0]["optimizer_impl"]), ("rtx-4090", "foreach"))
        self.assertIn("mps.sync", log)
        self.assertNotIn("cuda.sync", log)
        self.assertIn("scaler mps True", log)  # fp16: a GradScaler

    def test_an_unknown_gpu_is_refused_before_anything_runs(self):
        rc, rows, err, log = self.run_main(["--model", "gpt2", "--seq", "8"], cuda_name="NVIDIA A10G")
        self.assertEqual(rc, 2)
        self.assertIn("unknown device 'NVIDIA A10G'", err)
        self.assertEqual(rows, [])
        self.assertNotIn("optimizer.step", log)

    def test_a_trace_is_profiled_with_shapes_into_its_own_row(self):
        d = tempfile.mkdtemp()
        csv_path, trace = os.path.join(d, "my.csv"), os.path.join(d, "traces", "h200.json")
        os.makedirs(os.path.dirname(trace))
        rc, _, err, log = self.run_main(["--model", "llama3-8b", "--seq", "64", "--precision", "bf16", "--steps", "2",
                                         "--warmup", "1", "--append", csv_path, "--trace", trace],
                                        cuda_name="NVIDIA H200")
        self.assertEqual(rc, 0, err)
        with open(csv_path) as f:
            rows = read_csv(f.read())
        self.assertEqual([(r["measures"], r["measured_ms"] != "", r["trace"]) for r in rows],
                         [("step", True, ""), ("kernels", False, os.path.join("traces", "h200.json"))])
        self.assertEqual(rows[1]["hardware"], "h200-sxm-141gb")
        self.assertIn("profile CPU+CUDA shapes True", log)
        self.assertEqual(log.count("profiler.step"), 4)  # one unrecorded, 3 recorded
        self.assertEqual(log.count("optimizer.step"), 3 + 4)
        self.assertIn("profiled 3 steps", err)
        if HAVE_PRENET:
            # The stand-in's step takes no time: calibrate says so, naming the row.
            r = subprocess.run([PRENET, "calibrate", "--measurements", csv_path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn("row 1: measured", r.stderr)
            self.assertIn("a unit mistaken", r.stderr)
            # The harness's trace row alone: prenet calibrate compares its kernels shape by shape.
            with open(csv_path) as f:
                lines = f.read().splitlines()
            with open(csv_path, "w") as f:
                f.write("\n".join([lines[0], lines[2]]) + "\n")
            r = subprocess.run([PRENET, "calibrate", "--measurements", csv_path, "--json"], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            gemm = [x for x in json.loads(r.stdout)["rows"] if x["measures"] == "kernels:gemm"]
            self.assertEqual([(x["matched_by"], x["measured_ms"]) for x in gemm], [("shape", 0.02)])

    def test_a_trace_needs_a_gpu_and_a_run(self):
        rc, _, err, _ = self.run_main(["--model", "gpt2", "--seq", "8", "--device", "mps", "--hardware", "rtx-4090",
                                       "--trace", "t.json"], mps=True)
        self.assertEqual(rc, 2)
        self.assertIn("--trace records the GPU's kernels", err)
        rc, _, err, _ = self.run_main(["--model", "gpt2", "--seq", "8", "--dry-run", "--hardware", "t4",
                                       "--trace", "t.json"])
        self.assertEqual(rc, 2)
        self.assertIn("not with --dry-run", err)

    def test_cuda_asked_for_but_absent(self):
        rc, rows, err, log = self.run_main(["--model", "gpt2", "--seq", "8", "--device", "cuda"])
        self.assertEqual(rc, 2)
        self.assertIn("sees no CUDA or ROCm device", err)


@unittest.skipUnless(HAVE_PRENET, NO_PRENET)
class AgainstPrenet(unittest.TestCase):
    """What the harness builds is what prenet predicts."""

    def features(self, model):
        r = subprocess.run([PRENET, "features", "--model", model, "--seq", "128", "--json"], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        return d["params"], d["forward_flops"], d["saved_activation_bytes"]

    def test_each_zoo_config_is_the_zoo_model(self):
        zoo = {m["id"] for m in json.loads(subprocess.run([PRENET, "zoo", "--json"], capture_output=True,
                                                          text=True).stdout)["models"]}
        configs = harness.zoo_configs()
        missing = (set(configs) | set(harness.VISION_MODELS) | set(harness.BERT_PRETRAINING)) - zoo
        self.assertFalse(missing, "not zoo ids: %s" % missing)
        with tempfile.TemporaryDirectory() as d:
            for model, doc in configs.items():
                path = os.path.join(d, model + ".json")
                with open(path, "w") as f:
                    json.dump(doc, f)
                self.assertEqual(self.features(path), self.features(model), model)

    def test_dry_run_rows_are_predictions_prenet_makes(self):
        for argv in (["--model", "llama3-8b", "--seq", "4096", "--precision", "bf16"],
                     ["--model", "resnet50", "--batch", "64", "--precision", "fp16", "--optimizer", "sgd"],
                     ["--config", TINY, "--seq", "32", "--attention", "eager", "--grad-accum", "2"]):
            r = run_script(*argv, "--dry-run", "--hardware", "t4")
            self.assertEqual(r.returncode, 0, r.stderr)
            row = read_csv(r.stdout)[0]
            p = subprocess.run([PRENET, "predict"] + harness.predict_flags(row) + ["--json"], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(p.returncode, 0, "%s: %s" % (argv, p.stderr))
            self.assertGreater(json.loads(p.stdout)["results"][0]["step"]["total_ms"], 0)


@unittest.skipUnless(HAVE["torch"], NO_TORCH)
class OnTheCpu(unittest.TestCase):
    """A tiny Llama (tests/fixtures/measure/tiny-llama.json) measured for real on the CPU."""

    def test_torch_helpers(self):
        import measure_steps
        self.assertEqual(measure_steps.pick_backend("cpu"), "cpu")
        self.assertIn(measure_steps.pick_backend("auto"), harness.BACKENDS)
        calls = []
        times = measure_steps.time_steps(lambda: calls.append(1), measure_steps.synchronizer("cpu"), 4)
        self.assertEqual((len(times), len(calls)), (4, 4))
        self.assertTrue(all(t >= 0 for t in times))

    @unittest.skipUnless(HAVE["transformers"], "transformers is not installed: the tiny Llama is skipped "
                                                "(pip install transformers)")
    def test_a_tiny_llama_step_end_to_end(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "my.csv")
            r = run_script("--config", TINY, "--device", "cpu", "--hardware", "t4", "--batch", "2", "--seq", "32",
                           "--steps", "3", "--warmup", "1", "--forward-backward", "--append", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                rows = read_csv(f.read())
        self.assertEqual([x["measures"] for x in rows], ["step", "forward_backward"])
        for x in rows:
            self.assertEqual(x["model"], os.path.relpath(TINY, d))
            self.assertEqual((x["hardware"], x["batch"], x["seq"], x["precision"]), ("t4", "2", "32", "fp32"))
            self.assertIn(x["attention"], ("flash", "eager"))
            self.assertIn(x["optimizer_impl"], ("fused", "foreach"))
            self.assertGreater(float(x["measured_ms"]), 0)
        self.assertIn("median", r.stderr)
        if HAVE_PRENET:
            row = dict(rows[0], model=TINY)
            p = subprocess.run([PRENET, "predict"] + harness.predict_flags(row) + ["--json"], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)

    @unittest.skipUnless(HAVE["torchvision"], "torchvision is not installed: the CPU ResNet-18 is skipped")
    def test_a_small_resnet_step(self):
        r = run_script("--model", "resnet18", "--image", "32", "--batch", "2", "--device", "cpu", "--hardware",
                       "t4", "--steps", "2", "--warmup", "1", "--optimizer", "sgd")
        self.assertEqual(r.returncode, 0, r.stderr)
        row = read_csv(r.stdout)[0]
        self.assertEqual((row["model"], row["image"]), ("resnet18", "32"))
        self.assertNotIn("attention", row)
        self.assertGreater(float(row["measured_ms"]), 0)


if __name__ == "__main__":
    unittest.main()
