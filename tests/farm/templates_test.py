#!/usr/bin/env python3
"""eddy farm submit writes, from the plan its Slurm jobs come from, an Open
Job Description template (Deadline Cloud's job bundles) and an OpenCue job
spec. Both parse as their formats require (OpenJD jobtemplate-2023-09: a
name, steps with unique names of at most 64 characters, a command and
string arguments, dependencies on steps that exist, no cycle; OpenCue cjsl:
spec/facility/show/shot/user/job/layers in the DTD's order, each layer a
cmd, a frame range, a chunk and a service, depends naming layers that
exist), run the same `eddy run` lines as the Slurm scripts, and wait on
the simulation of their own frames only.

    templates_test.py BUILD_DIR
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "..", "..", "examples", "water_hits_lemon.eddy.json")


def fail(message):
    print("templates_test: FAILED: " + message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def main():
    eddy = os.path.join(os.path.abspath(sys.argv[1]), "bin", "eddy")
    with tempfile.TemporaryDirectory(prefix="eddy_templates_") as tmp:
        out = os.path.join(tmp, "out")
        run = subprocess.run([eddy, "farm", "submit", GRAPH, "--frames", "1-6", "--chunk", "3", "--wedge",
                              "solver.xsph=0.0,0.05", "--post-chunk", "2", "--threads", "2", "--dry-run", "--out", out],
                             capture_output=True, text=True)
        check(run.returncode == 0, "submit --dry-run: " + run.stdout + run.stderr)
        jobs = os.path.join(out, "farm", "water_hits_lemon")

        # The Slurm scripts' command lines, by job: the reference.
        slurm = {}
        for v in range(2):
            for c in range(2):
                with open(os.path.join(jobs, "sim.v%d.c%d.sh" % (v, c))) as f:
                    line = [l for l in f if l.startswith("cook ")][0]
                slurm["sim-v%d-c%d" % (v, c)] = shlex.split(line)[1:]
        with open(os.path.join(jobs, "post.sh")) as f:
            for l in f:
                m = re.match(r"\s+(\d+)\) cook (.*) ;;$", l)
                if m:
                    t = int(m.group(1))
                    slurm["post-v%d-c%d" % (t // 3, t % 3)] = shlex.split(m.group(2))
        check(len(slurm) == 10, "the Slurm scripts hold %d jobs, not 10" % len(slurm))

        # OpenJD.
        with open(os.path.join(jobs, "openjd", "template.json")) as f:
            jd = json.load(f)
        check(jd.get("specificationVersion") == "jobtemplate-2023-09", "OpenJD: specificationVersion")
        check(isinstance(jd.get("name"), str) and 1 <= len(jd["name"]) <= 128, "OpenJD: job name")
        steps = jd.get("steps")
        check(isinstance(steps, list) and len(steps) == 10, "OpenJD: 10 steps expected")
        seen = set()
        for s in steps:
            name = s.get("name")
            check(isinstance(name, str) and 1 <= len(name) <= 64 and not any(ord(ch) < 32 for ch in name),
                  "OpenJD: step name %r" % name)
            check(name not in seen, "OpenJD: step %s twice" % name)
            for d in s.get("dependencies", []):
                check(set(d) == {"dependsOn"} and d["dependsOn"] in seen,
                      "OpenJD: step %s depends on %r, not an earlier step" % (name, d))
            seen.add(name)
            on_run = s["script"]["actions"]["onRun"]
            check(set(on_run) <= {"command", "args", "timeout", "cancelation"}, "OpenJD: onRun keys")
            check(os.path.isabs(on_run["command"]) and os.access(on_run["command"], os.X_OK), "OpenJD: command")
            args = on_run["args"]
            check(all(isinstance(a, str) and "{{" not in a for a in args), "OpenJD: arguments must be plain strings")
            check([on_run["command"]] + args == slurm[name], "OpenJD: %s runs %s, Slurm %s" % (name, args, slurm[name]))
        deps = {s["name"]: [d["dependsOn"] for d in s.get("dependencies", [])] for s in steps}
        check(deps["sim-v0-c0"] == [] and deps["sim-v1-c1"] == ["sim-v1-c0"], "OpenJD: the chain's order")
        # Frames 1-2 are simulated by the first chain job, 3-4 by both, 5-6 by the second.
        check(deps["post-v1-c0"] == ["sim-v1-c0"] and deps["post-v0-c1"] == ["sim-v0-c0", "sim-v0-c1"]
              and deps["post-v0-c2"] == ["sim-v0-c1"], "OpenJD: a downstream step waits on its own frames' simulation")

        # OpenCue.
        root = ET.parse(os.path.join(jobs, "opencue.xml")).getroot()
        check(root.tag == "spec", "OpenCue: root element")
        order = [e.tag for e in root]
        check(order == ["facility", "show", "shot", "user", "job", "depends"], "OpenCue: spec children %s" % order)
        job = root.find("job")
        check(job.get("name") == "water_hits_lemon", "OpenCue: job name")
        check([e.tag for e in job][-1] == "layers", "OpenCue: layers last in the job")
        layers = {}
        for layer in job.find("layers"):
            name = layer.get("name")
            check(layer.tag == "layer" and layer.get("type") == "Render" and name not in layers, "OpenCue: layer")
            r = re.fullmatch(r"(\d+)-(\d+)", layer.findtext("range"))
            check(r is not None, "OpenCue: range of %s" % name)
            check(int(layer.findtext("chunk")) == int(r.group(2)) - int(r.group(1)) + 1, "OpenCue: one task per layer")
            check(layer.find("services/service") is not None, "OpenCue: service of %s" % name)
            check(int(layer.findtext("cores")) == 2, "OpenCue: cores")
            check(shlex.split(layer.findtext("cmd")) == slurm[name], "OpenCue: %s's cmd" % name)
            layers[name] = r.groups()
        check(len(layers) == 10, "OpenCue: 10 layers expected")
        cue_deps = {}
        for d in root.find("depends"):
            check(d.get("type") == "LAYER_ON_LAYER", "OpenCue: depend type")
            check(d.findtext("depjob") == d.findtext("onjob") == "water_hits_lemon", "OpenCue: depend jobs")
            check(d.findtext("deplayer") in layers and d.findtext("onlayer") in layers, "OpenCue: depend layers")
            cue_deps.setdefault(d.findtext("deplayer"), []).append(d.findtext("onlayer"))
        check(cue_deps == {k: v for k, v in deps.items() if v}, "OpenCue: the same waits as OpenJD")
    print("templates_test: passed")


if __name__ == "__main__":
    main()
