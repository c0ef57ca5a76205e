"""deploy/docker: the images cannot be built here (no image registry to pull base images from), so
each Dockerfile is parsed by the official parser (PyPI `dockerfile`: BuildKit's Go parser) and
checked against the repository and the manifests that run it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import dockerfile
import pytest
from manifests import KUBERNETES, ROOT, one, render

DOCKER = ROOT / "deploy" / "docker"
# Dockerfile -> the kustomize variant whose pods run its image.
IMAGES = {"Dockerfile": "sidecar", "python-app.Dockerfile": "python-app"}


def parse(name: str) -> list[dockerfile.Command]:
    return list(dockerfile.parse_file(str(DOCKER / name)))


def final_stage(cmds: list[dockerfile.Command]) -> list[dockerfile.Command]:
    last_from = max(i for i, c in enumerate(cmds) if c.cmd == "FROM")
    return cmds[last_from:]


def workspace_rust_version() -> str:
    m = re.search(r'^rust-version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.MULTILINE)
    assert m is not None
    return m.group(1)


INSTRUCTIONS = {
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK", "LABEL",
    "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
}  # fmt: skip


def instruction_problems(cmds: list[dockerfile.Command]) -> list[str]:
    """Unknown instructions, and an ENTRYPOINT or CMD in shell form: then /bin/sh is PID 1 and
    the SIGTERM of a pod deletion never reaches tenure, so a leader would not hand over."""
    out = [f"line {c.start_line}: unknown instruction {c.original!r}" for c in cmds if c.cmd not in INSTRUCTIONS]
    out += [
        f"line {c.start_line}: {c.cmd} in shell form (signals go to /bin/sh)"
        for c in final_stage(cmds)
        if c.cmd in ("ENTRYPOINT", "CMD") and not c.json
    ]
    return out


@pytest.mark.parametrize("name", list(IMAGES))
def test_instructions_are_known_and_the_entrypoint_gets_the_signals(name: str) -> None:
    assert instruction_problems(parse(name)) == []


def test_the_instruction_check_fails_on_a_broken_dockerfile() -> None:
    broken = list(dockerfile.parse_string("FROM debian:trixie-slim\nCOPPY a b\nENTRYPOINT tenure run\n"))
    problems = instruction_problems(broken)
    assert any("COPPY" in p for p in problems) and any("shell form" in p for p in problems), problems


@pytest.mark.parametrize("name", list(IMAGES))
def test_the_build_uses_the_workspace_toolchain_and_existing_sources(name: str) -> None:
    cmds = parse(name)
    builders = [c.value[0] for c in cmds if c.cmd == "FROM" and c.value[0].startswith("rust:")]
    assert builders and all(b.startswith(f"rust:{workspace_rust_version()}-") for b in builders), builders
    for c in cmds:
        if c.cmd == "COPY" and not any(f.startswith("--from") for f in c.flags):
            for src in c.value[:-1]:
                assert (ROOT / src).exists(), f"{name}: COPY {src}: no such file in the repository"
    # An ignore file next to the Dockerfile keeps target/, node_modules and .venv out of the context.
    ignore = (DOCKER / f"{name}.dockerignore").read_text().split()
    assert {"target", ".venv", "**/node_modules"} <= set(ignore)


def test_the_sidecar_image_builds_the_tenure_binary() -> None:
    cmds = parse("Dockerfile")
    run = " ".join(v for c in cmds if c.cmd == "RUN" for v in c.value)
    words = shlex.split(run)
    package, binary = words[words.index("-p") + 1], words[words.index("--bin") + 1]
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    bins = {(p["name"], t["name"]) for p in meta["packages"] for t in p["targets"] if "bin" in t["kind"]}
    assert (package, binary) in bins, f"cargo build -p {package} --bin {binary}: no such binary target"
    features = {f for p in meta["packages"] if p["name"] == package for f in p["features"]}
    asked = words[words.index("--features") + 1].split(",") if "--features" in words else []
    assert set(asked) <= features, f"cargo build -p {package} --features {asked}: {package} has {sorted(features)}"
    entry = next(c.value for c in final_stage(cmds) if c.cmd == "ENTRYPOINT")
    copied = [c.value[-1] for c in final_stage(cmds) if c.cmd == "COPY"]
    assert entry[0] in copied, f"ENTRYPOINT {entry[0]} is not what the final stage copies ({copied})"
    # PID 1 of a container takes every other process with it when it dies: the runtime must not
    # be PID 1, or its watchdog dies with it and no death notice is sent.
    if binary == "tenure":
        assert entry[0].rsplit("/", 1)[-1] == "tini" and entry[1] == "--", f"ENTRYPOINT {entry}: tenure would be PID 1"
        assert f"/usr/local/bin/{binary}" in entry, f"ENTRYPOINT {entry} does not run {binary}"


def test_the_python_image_pins_the_repositorys_maturin() -> None:
    run = " ".join(v for c in parse("python-app.Dockerfile") if c.cmd == "RUN" for v in c.value)
    pinned = re.search(r"^maturin==(\S+)$", (ROOT / "requirements-dev.txt").read_text(), re.MULTILINE)
    assert pinned is not None and f"maturin=={pinned.group(1)}" in run


@pytest.mark.parametrize(("name", "variant"), list(IMAGES.items()))
def test_the_image_fits_the_pods_that_run_it(name: str, variant: str) -> None:
    """The final stage's user is the pods' runAsUser (it owns the state volume through fsGroup),
    and it exposes the ports the tenure container declares."""
    final = final_stage(parse(name))
    sts = one(render(KUBERNETES / variant), "StatefulSet")
    assert sts is not None
    pod = sts["spec"]["template"]["spec"]
    user = next(c.value[0] for c in final if c.cmd == "USER")
    ctx = pod["securityContext"]
    assert user == f"{ctx['runAsUser']}:{ctx['runAsGroup']}" and ctx["fsGroup"] == ctx["runAsGroup"]
    exposed = {v.lower() for c in final if c.cmd == "EXPOSE" for v in c.value}
    containers = [*pod.get("initContainers", []), *pod["containers"]]
    election = next(c for c in containers if any(p["name"] == "election" for p in c["ports"]))
    declared = {f"{p['containerPort']}/{p.get('protocol', 'TCP').lower()}" for p in election["ports"]}
    assert declared == exposed, f"{name} exposes {exposed}, the pod's tenure container declares {declared}"
