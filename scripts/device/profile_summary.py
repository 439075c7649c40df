#!/usr/bin/env python3
"""Summary of a Kineto trace of decode steps (`policy_bench decode --profile TRACE.json`)
or training steps (`train_bench --profile`): the device time per step by kernel, the sum
of kernel time against the wall time of the window, where the device sat idle (gaps
between kernels), and whose the idle was: a gap before a kernel whose launch call began
after the device had gone idle is the host's (the device waited for the launch), any
other gap the device's own (a dependency, a synchronisation, a copy).

  profile_summary.py TRACE.json [steps] [top]
"""
import collections
import json
import sys

path = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
with open(path) as f:
    trace = json.load(f)
events = trace["traceEvents"] if isinstance(trace, dict) else trace
dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
if not dev:
    sys.exit("no device events in the trace")
dev.sort(key=lambda e: e["ts"])
t0, t1 = dev[0]["ts"], max(e["ts"] + e["dur"] for e in dev)
busy = sum(e["dur"] for e in dev)


def kind(name):
    n = name.lower()
    if any(k in n for k in ("fmha", "attention", "flash", "attn")):
        return "attention"
    if any(k in n for k in ("gemm", "nvjet", "xmma", "cutlass", "cublas", "splitk")):
        return "gemm"
    if any(k in n for k in ("softmax", "reduce", "argmax", "norm")):
        return "reduce/softmax/norm"
    if "memcpy" in n or "memset" in n:
        return "copy"
    return "elementwise/other"


by_name = collections.defaultdict(lambda: [0.0, 0])
by_kind = collections.defaultdict(lambda: [0.0, 0])
for e in dev:
    n = e["name"]
    by_name[n][0] += e["dur"]
    by_name[n][1] += 1
    by_kind[kind(n)][0] += e["dur"]
    by_kind[kind(n)][1] += 1
gaps = collections.Counter()
gap_time = collections.defaultdict(float)
end = dev[0]["ts"]
for e in dev:
    g = e["ts"] - end
    if g > 0:
        b = "<2us" if g < 2 else "2-5us" if g < 5 else "5-20us" if g < 20 else "20-100us" if g < 100 else ">100us"
        gaps[b] += 1
        gap_time[b] += g
    end = max(end, e["ts"] + e["dur"])

print(f"window {((t1 - t0) / steps) / 1e3:.3f} ms/step over {steps} steps; kernels busy "
      f"{busy / steps / 1e3:.3f} ms/step; idle {((t1 - t0) - busy) / steps / 1e3:.3f} ms/step; "
      f"{len(dev) / steps:.0f} device ops/step")
print("idle gaps per step:", ", ".join(f"{b}: {gaps[b] / steps:.0f} x = {gap_time[b] / steps / 1e3:.3f} ms"
                                       for b in ("<2us", "2-5us", "5-20us", "20-100us", ">100us")))
print("by kind (ms/step, ops/step):")
for k, (t, c) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
    print(f"  {k:22s} {t / steps / 1e3:7.3f} {c / steps:7.0f}")
print(f"top {top} kernels (us/step, ops/step, us/op):")
for n, (t, c) in sorted(by_name.items(), key=lambda kv: -kv[1][0])[:top]:
    print(f"  {t / steps:8.1f} {c / steps:6.1f} {t / c:7.2f}  {n[:110]}")
runtime = collections.defaultdict(lambda: [0.0, 0])
for e in events:
    if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
        runtime[e["name"]][0] += e["dur"]
        runtime[e["name"]][1] += 1
print("host runtime calls (us/step, calls/step):")
for n, (t, c) in sorted(runtime.items(), key=lambda kv: -kv[1][0])[:8]:
    print(f"  {t / steps:8.1f} {c / steps:6.1f}  {n}")

# Whose idle: link each kernel to its launch call by correlation id.
launch = {}
for e in events:
    if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
        c = (e.get("args") or {}).get("correlation")
        if c is not None:
            launch[c] = e
host_idle = other_idle = 0.0
host_gaps = 0
queued = []
end = dev[0]["ts"]
for e in dev:
    g = e["ts"] - end
    rt = launch.get((e.get("args") or {}).get("correlation"))
    if rt is not None:
        queued.append(e["ts"] - (rt["ts"] + rt["dur"]))
    if g > 0:
        if rt is not None and rt["ts"] >= end:
            host_idle += g
            host_gaps += 1
        else:
            other_idle += g
    end = max(end, e["ts"] + e["dur"])
queued.sort()
if queued:
    q = lambda f: queued[min(len(queued) - 1, int(f * len(queued)))]
    print(f"idle waiting for the host's launch {host_idle / steps / 1e3:.3f} ms/step ({host_gaps / steps:.0f} gaps), "
          f"other idle {other_idle / steps / 1e3:.3f} ms/step; a kernel's start after its launch call returned: "
          f"median {q(0.5):.1f} us, 10th percentile {q(0.1):.1f} us ({len(queued)} kernels linked)")

# Which framework operations issue the device's operations: each device op is linked to the
# CPU-side op (aten::...) that launched it by its external id; the innermost op counts.
issuer = {}
for e in events:
    if e.get("ph") == "X" and e.get("cat") == "cpu_op":
        x = (e.get("args") or {}).get("External id")
        if x is not None:
            prev = issuer.get(x)
            if prev is None or e.get("dur", 0) < prev.get("dur", 0):
                issuer[x] = e
# The backward node an op ran under (autograd's evaluate_function), else the forward.
context = {}
by_thread = collections.defaultdict(list)
for e in events:
    if e.get("ph") == "X" and e.get("cat") == "cpu_op":
        by_thread[e.get("tid")].append(e)
for ops in by_thread.values():
    ops.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    open_ops = []
    for e in ops:
        while open_ops and open_ops[-1]["ts"] + open_ops[-1].get("dur", 0) < e["ts"]:
            open_ops.pop()
        node = next((o["name"].split(": ")[-1] for o in reversed(open_ops)
                     if o["name"].startswith("autograd::engine::evaluate_function")), "forward")
        context[id(e)] = node
        open_ops.append(e)
by_issuer = collections.defaultdict(lambda: [0, 0.0])
for e in dev:
    x = (e.get("args") or {}).get("External id")
    op_event = issuer.get(x) if x is not None else None
    op = f"{context.get(id(op_event), '?')} / {op_event['name']}" if op_event else "(no framework op)"
    k = f"{op} -> {'memset' if e.get('cat') == 'gpu_memset' else 'copy' if e.get('cat') == 'gpu_memcpy' else kind(e['name'])}"
    by_issuer[k][0] += 1
    by_issuer[k][1] += e["dur"]
print("device ops by the framework op that issued them, under its backward node or the forward (ops/step, device ms/step), top 30:")
for k, (c, t) in sorted(by_issuer.items(), key=lambda kv: -kv[1][0])[:30]:
    print(f"  {c / steps:7.0f} {t / steps / 1e3:8.3f}  {k[:130]}")
