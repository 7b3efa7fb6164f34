#!/usr/bin/env python3
"""Compiles models/kernels.json into a C++ source: the document without its trees as JSON text, and the trees of its
gradient-boosted models as flat integer arrays (predict/embedded_models.hpp describes the layout).

Why not the JSON text itself: the trees are ~56,000 nodes, 1.4 MB of text (373 KB gzip) in the wasm module, and
parsing them took 380-730 ms of the page's first request in Chromium (docs/performance.md). As arrays they take
about half that in the gzipped page (170 KB less) and are read without a parser. models/kernels.json stays the source of truth (`prenet fit`
writes it); this runs at build time (CMakeLists.txt), under Python 3, which Emscripten's em++ needs anyway.

Every number must come back bit for bit as the double json::parse gives for its text (correctly rounded, as
Python's float() is). Each is stored as an integer mantissa m and a power of ten e, and read as m * 10^e or
m / 10^-e: with |m| < 2^53 and |e| <= 22 both factors are exact doubles, so that is one correctly rounded operation,
the same double (Clinger's fast path). This script checks it for each number with the same IEEE arithmetic; a number
it does not hold for is stored as an exact double instead (a hexadecimal literal).

Usage: embed_kernel_models.py MODELS_JSON OUT_CPP   (MODELS_JSON may be absent: no models are built in)
"""
import decimal
import json
import os
import sys

EXACT = -128  # the exponent that marks a mantissa as an index into the exact doubles
INT32_MAX = 2**31 - 1


def fail(message):
    sys.exit(f"embed_kernel_models.py: {sys.argv[1]}: {message}")


def split(x):
    """(mantissa, exponent) with mantissa x 10^exponent == x exactly in double arithmetic, or None."""
    sign, digits, exponent = decimal.Decimal(repr(float(x))).as_tuple()  # repr: the shortest digits that round-trip
    if not isinstance(exponent, int):
        return None  # inf or nan, which JSON cannot hold anyway
    m = int("".join(map(str, digits)) or "0")
    while m and m % 10 == 0:
        m //= 10
        exponent += 1
    if m == 0:
        exponent = 0
    if sign:
        m = -m
    if abs(m) > INT32_MAX or not -22 <= exponent <= 22:
        return None
    back = float(m) / float(10**-exponent) if exponent < 0 else float(m) * float(10**exponent)  # exact powers
    if back != x or (back == 0 and str(back) != str(float(x))):  # also keeps the sign of a zero
        return None
    return m, exponent


def trees_of(family, model):
    """The model's trees as (node counts, features, numbers); checks the breadth-first layout the reader assumes."""
    sizes, features, numbers = [], [], []
    for t, tree in enumerate(model["trees"]):
        where = f"family '{family}', tree {t}"
        feature, left, right = tree["feature"], tree["left"], tree["right"]
        threshold, value = tree["threshold"], tree["value"]
        n = len(feature)
        if n == 0 or n > 32767 or any(len(a) != n for a in (left, right, threshold, value)):
            fail(f"{where}: malformed tree")
        split_index = 0
        for i in range(n):
            f = feature[i]
            if not isinstance(f, int) or not -1 <= f <= 127:
                fail(f"{where}: feature {f!r} out of range")
            if f >= 0:
                # `prenet fit` grows trees breadth first and appends both children of a split together, so the
                # k-th split's children are nodes 2k+1 and 2k+2 and need not be stored.
                if left[i] != 2 * split_index + 1 or right[i] != 2 * split_index + 2:
                    fail(f"{where}: node {i}'s children are not breadth-first (refit with `prenet fit`)")
                split_index += 1
                numbers.append(threshold[i])
            else:
                numbers.append(value[i])  # a split's value is never read (TreeEnsemble::predict)
            features.append(f)
        if n != 2 * split_index + 1:
            fail(f"{where}: {n} nodes for {split_index} splits")
        sizes.append(n)
    return sizes, features, numbers


def c_array(ctype, name, values, per_line=24):
    if not values:
        values = ["0"]  # C++ has no empty arrays; the counts say there is nothing
    lines = [",".join(values[i:i + per_line]) for i in range(0, len(values), per_line)]
    return f"const {ctype} {name}[] = {{\n" + ",\n".join(lines) + "};\n"


def raw_string(text):
    # Below 16 KB a piece, compilers' string-literal limit (as cmake/EmbedDataScript.cmake does).
    pieces = [text[i:i + 12000] for i in range(0, len(text), 12000)] or [""]
    return " ".join(f'R"prenet_embed({p})prenet_embed"' for p in pieces)


def main():
    source, out = sys.argv[1], sys.argv[2]
    have = os.path.exists(source)
    families, tree_counts, sizes, features, mantissas, exponents, exact = [], [], [], [], [], [], []
    document = ""
    if have:
        with open(source, encoding="utf-8") as f:
            doc = json.load(f)
        for family, entry in doc.get("families", {}).items():
            model = entry.get("model", {})
            if model.get("type") != "gbt" or not isinstance(model.get("trees"), list):
                continue  # ridge models are a few numbers: they stay JSON
            s, fe, nums = trees_of(family, model)
            for x in nums:
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    fail(f"family '{family}': {x!r} is not a number")
                me = split(float(x))
                if me is None:
                    me = (len(exact), EXACT)
                    exact.append(float(x))
                mantissas.append(me[0])
                exponents.append(me[1])
            families.append(family)
            tree_counts.append(len(s))
            sizes += s
            features += fe
            del model["trees"]  # read from the arrays (predict/embedded_models.cpp)
        document = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        if "prenet_embed" in document:
            fail("contains the raw-string delimiter prenet_embed")

    body = [
        "// Generated by cmake/embed_kernel_models.py from models/kernels.json. Do not edit.\n",
        '#include "predict/embedded_models.hpp"\n\n',
        "namespace prenet {\n\n",
    ]
    if have:
        body += [
            "namespace {\n",
            f"const char* const kFamilies[] = {{{','.join(json.dumps(f) for f in families) or 'nullptr'}}};\n",
            c_array("std::int32_t", "kTreeCounts", [str(c) for c in tree_counts]),
            c_array("std::int16_t", "kTreeSizes", [str(s) for s in sizes]),
            c_array("std::int8_t", "kFeature", [str(f) for f in features], 40),
            c_array("std::int32_t", "kMantissa", [str(m) for m in mantissas], 16),
            c_array("std::int8_t", "kExponent", [str(e) for e in exponents], 40),
            c_array("double", "kExact", [x.hex() for x in exact], 4),
            "}  // namespace\n\n",
        ]
    body += ["const EmbeddedKernelModels* embedded_kernel_model_data() {\n"]
    if have:
        body += [
            "    static const EmbeddedKernelModels data{\n",
            f"        {raw_string(document)},\n",
            f"        kFamilies, kTreeCounts, {len(families)}, kTreeSizes, kFeature, kMantissa, kExponent, kExact,\n",
            f"        {len(features)}, {len(exact)}}};\n",
            "    return &data;\n",
        ]
    else:
        body += ["    return nullptr;  // no models/kernels.json\n"]
    body += ["}\n\n}  // namespace prenet\n"]
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("".join(body))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
