"""Schema: attribute roles and kinds, missing-value policy, TOML form for the command line."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from anoncore.data.hierarchy import Hierarchy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["KINDS", "MISSING_POLICIES", "ROLES", "Attribute", "Schema"]

ROLES = ("identifier", "quasi_identifier", "sensitive", "insensitive", "pid", "time")
KINDS = ("numeric", "categorical", "ordinal")
MISSING_POLICIES = ("error", "drop", "as_value")
_ROLE_ALIASES = {"qi": "quasi_identifier", "quasi-identifier": "quasi_identifier", "id": "identifier",
                 "sa": "sensitive", "person_id": "pid", "timestamp": "time"}


@dataclass(frozen=True, slots=True)
class Attribute:
    """One column of a table and how it is treated.

    Parameters
    ----------
    name : str
        Column name in the data.
    role : {'identifier', 'quasi_identifier', 'sensitive', 'insensitive', 'pid', 'time'}
        Identifiers are dropped at encoding; quasi-identifiers are generalized; sensitive attributes are
        published exactly and protected by the models; insensitive columns are published as they are;
        ``pid`` and ``time`` identify persons and positions in streams.
    kind : {'numeric', 'categorical', 'ordinal'}, default='categorical'
    hierarchy : Hierarchy, default=None
        Generalization hierarchy. Categorical attributes without one get a flat hierarchy (every value
        under ``*``) at encoding. Numeric attributes may have an interval hierarchy whose leaves are numbers.
    order : sequence, default=None
        Ordinal attributes: the values in increasing order (ignored when a hierarchy gives the order).
    domain : tuple of float, default=None
        Numeric attributes: the declared range ``(L, U)`` used by information-loss metrics; by default the
        data's range.
    """

    name: str
    role: str = "quasi_identifier"
    kind: str = "categorical"
    hierarchy: Hierarchy | None = None
    order: tuple[Any, ...] | None = None
    domain: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"Attribute name must be a non-empty str. Got {self.name!r} instead.")
        role = _ROLE_ALIASES.get(self.role, self.role) if isinstance(self.role, str) else self.role
        if role not in ROLES:
            raise ValueError(f"The 'role' of attribute {self.name!r} must be one of {ROLES}. Got {self.role!r} instead.")
        object.__setattr__(self, "role", role)
        if self.kind not in KINDS:
            raise ValueError(f"The 'kind' of attribute {self.name!r} must be one of {KINDS}. Got {self.kind!r} instead.")
        if self.hierarchy is not None and not isinstance(self.hierarchy, Hierarchy):
            raise TypeError(
                f"The 'hierarchy' of attribute {self.name!r} must be a Hierarchy (build it with "
                f"Hierarchy.from_arx_csv, from_nested, from_parent_map or a builder). Got "
                f"{type(self.hierarchy).__name__} instead."
            )
        if self.order is not None:
            object.__setattr__(self, "order", tuple(self.order))
            if self.kind != "ordinal":
                raise ValueError(f"Attribute {self.name!r}: 'order' is only meaningful for kind='ordinal'.")
            if len(set(map(str, self.order))) != len(self.order):
                raise ValueError(f"Attribute {self.name!r}: 'order' lists a value twice.")
        if self.domain is not None:
            if self.kind != "numeric":
                raise ValueError(f"Attribute {self.name!r}: 'domain' is only meaningful for kind='numeric'.")
            lo, hi = (float(x) for x in self.domain)
            if not lo <= hi:
                raise ValueError(f"Attribute {self.name!r}: domain must satisfy L <= U. Got {self.domain!r}.")
            object.__setattr__(self, "domain", (lo, hi))
        if self.kind == "numeric" and self.hierarchy is not None:
            bad = []
            for lab in self.hierarchy.leaves:
                try:
                    float(lab)
                except ValueError:
                    bad.append(lab)
            if bad:
                raise ValueError(
                    f"Attribute {self.name!r} is numeric but its hierarchy has non-numeric leaves, e.g. {bad[0]!r}."
                )


@dataclass(frozen=True, slots=True)
class Schema:
    """The attributes of a table and the missing-value policy.

    Parameters
    ----------
    attributes : sequence of Attribute
    missing : {'error', 'drop', 'as_value'}, default='error'
        What to do with missing values in kept columns: refuse the table, drop the rows (reported in
        ``Table.dropped_rows``), or keep the missing token as a value of its own.
    missing_tokens : tuple of str, default=('?',)
        Strings that count as missing, in addition to NaN, None and empty cells.
    sep : str, default=None
        The field separator of the data files read with this schema (``Table.from_csv`` uses it when no
        ``sep`` is given; ``'tab'`` means a tab). None detects ``,`` or ``;`` from the header.

    Examples
    --------
    >>> s = Schema([Attribute("age", "quasi_identifier", "numeric"), Attribute("disease", "sensitive")])
    >>> s.quasi_identifiers, s.sensitive
    (('age',), ('disease',))
    """

    attributes: tuple[Attribute, ...]
    missing: str = "error"
    missing_tokens: tuple[str, ...] = ("?",)
    sep: str | None = None
    _by_name: dict[str, Attribute] = field(default_factory=dict, repr=False, compare=False)
    _roles: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        attrs = tuple(self.attributes)
        for a in attrs:
            if not isinstance(a, Attribute):
                raise TypeError(f"Schema attributes must be Attribute objects. Got {type(a).__name__} instead.")
        object.__setattr__(self, "attributes", attrs)
        names = [a.name for a in attrs]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ValueError(f"Schema declares attribute {dup!r} twice.")
        if not attrs:
            raise ValueError("Schema has no attribute.")
        if self.missing not in MISSING_POLICIES:
            raise ValueError(
                f"The 'missing' parameter of Schema must be one of {MISSING_POLICIES}. Got {self.missing!r} instead."
            )
        object.__setattr__(self, "missing_tokens", tuple(str(t) for t in self.missing_tokens))
        if self.sep is not None:
            sep = {"tab": "\t", "\\t": "\t"}.get(self.sep, self.sep) if isinstance(self.sep, str) else self.sep
            if not isinstance(sep, str) or len(sep) != 1 or sep in "\"\r\n":
                raise ValueError(f"The 'sep' of a Schema must be one character (e.g. ',', ';' or 'tab'). Got "
                                 f"{self.sep!r} instead.")
            object.__setattr__(self, "sep", sep)
        object.__setattr__(self, "_by_name", {a.name: a for a in attrs})
        roles: dict[str, list[str]] = {}
        for a in attrs:
            roles.setdefault(a.role, []).append(a.name)
        # the names of each role, made once (quasi_identifiers is read many times in every algorithm's call)
        object.__setattr__(self, "_roles", {r: tuple(v) for r, v in roles.items()})
        for role in ("pid", "time"):
            if sum(a.role == role for a in attrs) > 1:
                raise ValueError(f"Schema declares more than one {role!r} attribute.")

    def __getitem__(self, name: str) -> Attribute:
        try:
            return self._by_name[name]
        except KeyError:
            raise ValueError(f"Unknown column {name!r}; the schema has {list(self._by_name)}.") from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes)

    def with_role(self, role: str) -> tuple[str, ...]:
        return self._roles.get(role, ())

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.with_role("quasi_identifier")

    @property
    def sensitive(self) -> tuple[str, ...]:
        return self.with_role("sensitive")

    def sensitive_column(self, sensitive: str | None = None, caller: str = "this model") -> str:
        """The one sensitive attribute a model or algorithm uses: ``sensitive`` (which must be one of the
        schema's sensitive attributes), or the schema's only one."""
        sas = self.sensitive
        if sensitive is not None:
            if sensitive not in sas:
                raise ValueError(f"The 'sensitive' parameter of {caller} must name a sensitive attribute among "
                                 f"{list(sas)}; it names sensitive attribute {sensitive!r}.")
            return sensitive
        if not sas:
            raise ValueError(f"{caller} needs a sensitive attribute, but the schema declares none (it needs exactly one "
                             f"sensitive attribute, or one named with sensitive=...).")
        if len(sas) > 1:
            raise ValueError(f"The schema has several sensitive attributes {list(sas)}: {caller} needs exactly "
                             f"one sensitive attribute, so name one with sensitive=...")
        return sas[0]

    def replace_attribute(self, name: str, **changes: Any) -> Schema:
        """A copy with attribute ``name`` changed (e.g. its role)."""
        attrs = tuple(replace(a, **changes) if a.name == name else a for a in self.attributes)
        self[name]
        return replace(self, attributes=attrs)

    @classmethod
    def build(
        cls,
        quasi_identifiers: Mapping[str, Any] | Sequence[str] = (),
        sensitive: Mapping[str, Any] | Sequence[str] | str = (),
        identifiers: Iterable[str] = (),
        insensitive: Iterable[str] = (),
        *,
        pid: str | None = None,
        time: str | None = None,
        missing: str = "error",
        missing_tokens: Sequence[str] = ("?",),
    ) -> Schema:
        """Convenience constructor.

        ``quasi_identifiers`` and ``sensitive`` map a column to a Hierarchy, to ``'numeric'``, to a dict of
        Attribute keyword arguments, or are plain lists of categorical column names.

        Examples
        --------
        >>> Schema.build({"age": "numeric", "zip": None}, sensitive="disease").quasi_identifiers
        ('age', 'zip')
        """
        attrs: list[Attribute] = []

        def add(spec: Any, role: str) -> None:
            if isinstance(spec, str):
                spec = [spec]
            items = spec.items() if isinstance(spec, Mapping) else ((n, None) for n in spec)
            for n, v in items:
                if v is None:
                    attrs.append(Attribute(n, role))
                elif isinstance(v, Hierarchy):
                    attrs.append(Attribute(n, role, "categorical", hierarchy=v))
                elif isinstance(v, str):
                    attrs.append(Attribute(n, role, v))
                elif isinstance(v, Mapping):
                    attrs.append(Attribute(n, role, **v))
                else:
                    raise TypeError(f"Attribute spec for {n!r} must be None, a Hierarchy, a kind or a dict.")

        add(quasi_identifiers, "quasi_identifier")
        add(sensitive, "sensitive")
        add(list(identifiers), "identifier")
        add(list(insensitive), "insensitive")
        if pid is not None:
            attrs.append(Attribute(pid, "pid", "numeric"))
        if time is not None:
            attrs.append(Attribute(time, "time", "numeric"))
        return cls(tuple(attrs), missing=missing, missing_tokens=tuple(missing_tokens))

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Schema:
        """Read a schema from TOML (paths of hierarchy files are relative to the TOML file).

        The format::

            missing = "error"            # or "drop", "as_value"
            missing_tokens = ["?"]

            [attributes.age]
            role = "quasi_identifier"
            kind = "numeric"
            hierarchy = "adult_hierarchy_age.csv"   # ARX format
            domain = [17, 90]

            [attributes.occupation]
            role = "sensitive"
            hierarchy = "adult_hierarchy_occupation.csv"

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
        >>> _ = p.write_text('[attributes.zip]\\nrole = "qi"\\n[attributes.disease]\\nrole = "sensitive"\\n')
        >>> Schema.from_toml(p).sensitive
        ('disease',)
        """
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
        return cls.from_dict(doc, base_dir=os.path.dirname(os.path.abspath(os.fspath(path))))

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], base_dir: str | None = None) -> Schema:
        """Build from the parsed TOML structure (see :meth:`from_toml`)."""
        attrs_doc = doc.get("attributes")
        if not isinstance(attrs_doc, Mapping) or not attrs_doc:
            raise ValueError("Schema document needs an [attributes] table with at least one attribute.")
        unknown = set(doc) - {"attributes", "missing", "missing_tokens", "sep"}
        if unknown:
            raise ValueError(f"Unknown schema key(s) {sorted(unknown)}.")
        attrs = []
        for name, spec in attrs_doc.items():
            spec = dict(spec)
            bad = set(spec) - {"role", "kind", "hierarchy", "order", "domain", "hierarchy_sep"}
            if bad:
                raise ValueError(f"Unknown key(s) {sorted(bad)} for attribute {name!r}.")
            h = spec.pop("hierarchy", None)
            hsep = spec.pop("hierarchy_sep", ";")
            if h is not None:
                hpath = h if base_dir is None or os.path.isabs(h) else os.path.join(base_dir, h)
                if not os.path.exists(hpath):
                    raise ValueError(f"Hierarchy file {hpath!r} of attribute {name!r} does not exist.")
                spec["hierarchy"] = Hierarchy.from_arx_csv(hpath, sep=hsep, name=name)
            if "domain" in spec:
                spec["domain"] = tuple(spec["domain"])
            if "order" in spec:
                spec["order"] = tuple(spec["order"])
            attrs.append(Attribute(name, **spec))
        return cls(
            tuple(attrs),
            missing=doc.get("missing", "error"),
            missing_tokens=tuple(doc.get("missing_tokens", ("?",))),
            sep=doc.get("sep"),
        )
