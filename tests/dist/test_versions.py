"""One version: every manifest in the repository agrees with `[workspace.package]
version` in Cargo.toml. Needs no build."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib

from conftest import ROOT, VERSION


def tracked(pattern: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", pattern, f"**/{pattern}"], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return sorted(set(out.stdout.split()))


def test_every_cargo_manifest_takes_the_workspace_version() -> None:
    ws = tomllib.loads((ROOT / "Cargo.toml").read_text())
    assert ws["workspace"]["dependencies"]["tenure"]["version"] == VERSION
    wrong = []
    for path in tracked("Cargo.toml"):
        package = tomllib.loads((ROOT / path).read_text()).get("package")
        if package is None or path.startswith("fuzz/"):  # the workspace root; cargo-fuzz's own crate
            continue
        if package.get("version") not in ({"workspace": True}, VERSION):
            wrong.append(f"{path}: {package.get('version')}")
    assert not wrong, wrong


def test_every_package_json_of_ours_has_the_workspace_version() -> None:
    wrong = []
    seen = []
    for path in tracked("package.json"):
        manifest = json.loads((ROOT / path).read_text())
        name = manifest.get("name", "")
        if not name.startswith("tenure"):
            continue  # private test and demo projects
        seen.append(name)
        if manifest.get("version") != VERSION:
            wrong.append(f"{path}: {manifest.get('version')}")
        lock = ROOT / path.replace("package.json", "package-lock.json")
        if lock.exists() and json.loads(lock.read_text()).get("version") != VERSION:
            wrong.append(f"{lock.relative_to(ROOT)}: {json.loads(lock.read_text()).get('version')}")
    assert not wrong, wrong
    assert {"tenure", "tenure-linux-x64-gnu", "tenure-linux-arm64-gnu", "tenure-linux-x64-musl", "tenure-web"} <= set(seen)


def test_pyproject_has_the_workspace_version() -> None:
    project = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]
    assert project.get("version") == VERSION or "version" in project.get("dynamic", [])


# Hosts that can never be a project's real address (RFC 2606 / RFC 6761 reserved names).
PLACEHOLDER_HOST = re.compile(r"https?://(?:[\w.-]+\.)?(?:example|invalid|test|localhost)(?:\.[a-z]+)?(?:[:/\"']|$)")


def test_no_manifest_publishes_a_placeholder_address() -> None:
    """Package metadata (the wheel's Project-URL, npm's repository, Cargo's repository) names a real
    address or none: a reserved placeholder like example.invalid sends users nowhere. No public
    repository address is recorded in this repository, so there is none."""
    manifests = [*tracked("Cargo.toml"), *tracked("package.json"), "python/pyproject.toml", *tracked("README.md")]
    wrong = []
    for path in manifests:
        for n, line in enumerate((ROOT / path).read_text().splitlines(), 1):
            if PLACEHOLDER_HOST.search(line):
                wrong.append(f"{path}:{n}: {line.strip()}")
    assert not wrong, wrong
    urls = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"].get("urls", {})
    assert all(not PLACEHOLDER_HOST.search(u) for u in urls.values()), urls
