"""The public surface: docstrings everywhere, stubs in step with the compiled module, and the
outputs the native code builds behave exactly like the dataclasses they are."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

import tenure
from tenure import Config, Node, Send, _native


def public_members(obj: object) -> list[tuple[str, object]]:
    return [(n, m) for n, m in vars(obj).items() if not n.startswith("_")]


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name in tenure.__all__:
        obj = getattr(tenure, name)
        if name in {"Output"}:  # a typing alias: documented in _types.py and the README
            continue
        if not (getattr(obj, "__doc__", None) or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for member_name, member in public_members(obj):
                if callable(member) or isinstance(member, (property,)) or type(member).__name__ == "getset_descriptor":
                    if not (getattr(member, "__doc__", None) or "").strip():
                        missing.append(f"{name}.{member_name}")
    for module in (tenure.wire, tenure.cli, tenure.errors):
        assert module.__doc__
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isroutine(obj)) and not (obj.__doc__ or "").strip():
                missing.append(f"{module.__name__}.{name}")
    assert missing == []


def test_stub_lists_every_native_name() -> None:
    stub = ast.parse((Path(tenure.__file__).parent / "_native.pyi").read_text())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {t.target.id for t in stub.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}
    native = {n for n in dir(_native) if not n.startswith("_")}
    assert native == stubbed
    node_stub = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Node")
    node_members = {n.name for n in node_stub.body if isinstance(n, ast.FunctionDef)} - {"__init__"}
    assert node_members == {n for n in dir(Node) if not n.startswith("_")}


def test_native_built_outputs_are_real_frozen_dataclasses() -> None:
    node = Node(Config(id="a", cluster="c", bootstrap=("b", "c")), now=0, seed=7)
    deadline = node.poll_timeout()
    assert deadline is not None
    node.handle_timeout(deadline)
    out = node.drain()[0]
    assert isinstance(out, Send) and dataclasses.is_dataclass(out)
    assert out == Send(out.to, out.data) and hash(out) == hash(Send(out.to, out.data))
    assert repr(out).startswith("Send(to='b', data=b'TN")
    assert dataclasses.replace(out, to="c").to == "c"
    assert dataclasses.asdict(out) == {"to": "b", "data": out.data}
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.to = "x"  # type: ignore[misc]
