"""Where a value is read: follow a variable to its uses before a rule changes what it holds.

A rule that rewrites ``device = "xla"`` into a ``torch.device`` changes every place that reads
``device``: ``init_process_group(device)`` then raises, ``if device == "xla":`` is never true. So a
rewrite of a value is made only after its reads are known. They come from libcst's scope analysis
(``ScopeProvider``): reads in functions nested in the binding's scope count, and a name bound more than
once in its scope does not hold one value (``reads`` returns None). Computed once per file, and only for
files where a rule asks (it costs a few parses of the file).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, MetadataWrapper, ParentNodeProvider, ScopeProvider


class Flow:
    """Scopes and parents of one module (the original tree the rules visit)."""

    def __init__(self, module: cst.Module) -> None:
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # keep node identity with the traversal
        self.scopes = wrapper.resolve(ScopeProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)
        self._order = {id(node): index for index, node in enumerate(self.parents)}  # the walk's (source) order

    def position(self, node: cst.CSTNode) -> int:
        return self._order.get(id(node), 0)

    def parent(self, node: cst.CSTNode | None) -> cst.CSTNode | None:
        return self.parents.get(node) if node is not None else None

    def reads(self, target: cst.Name) -> list[cst.Name] | None:
        """The names that read the value bound at ``target`` (an assignment target or a parameter name),
        in source order; None when the name is bound more than once in its scope."""
        scope = self.scopes.get(target)
        if scope is None:
            return None
        assignments = list(scope.assignments[target.value])
        only = assignments[0] if len(assignments) == 1 else None
        bound = only.node if isinstance(only, Assignment) else None
        if not (bound is target or (isinstance(bound, cst.Param) and bound.name is target)):
            return None
        names = [access.node for access in assignments[0].references if isinstance(access.node, cst.Name)]
        if len(names) != len(assignments[0].references):
            return None  # a read libcst records on another node (a string annotation): not followed
        return sorted(names, key=self.position)

    def function(self, name: cst.Name) -> cst.FunctionDef | None:
        """The function a called name refers to, when the module defines it exactly once."""
        scope = self.scopes.get(name)
        if scope is None:
            return None
        bound = list(scope[name.value])
        # a builtin (BuiltinAssignment) has no node: not a function of the module
        if len(bound) == 1 and isinstance(bound[0], Assignment) and isinstance(bound[0].node, cst.FunctionDef):
            return bound[0].node
        return None

    def attribute_reads(self, attribute: str) -> list[cst.Attribute] | None:
        """Every ``x.<attribute>`` read of the file; None when the attribute is assigned more than once."""
        found: list[cst.Attribute] = []
        stores = 0
        for node, parent in self.parents.items():
            if isinstance(node, cst.Attribute) and node.attr.value == attribute:
                if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is node:
                    stores += 1
                else:
                    found.append(node)
        return None if stores != 1 else sorted(found, key=self.position)

