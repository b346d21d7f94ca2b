"""Arrow tables to Python rows, column by column, with identical rows shared.

``Table.to_pylist`` converts value by value through Arrow scalars, which costs tens of
microseconds per nested row. Converting each leaf column with one ``to_pylist`` call and zipping
the results is an order of magnitude faster. Rows are first built as nested tuples (hashable), so
that rows repeated across files (a log checkpoint repeats most of its predecessor's rows) become
one Python object: callers may then cache per-object work with ``id``. The objects are shared, so
callers must not mutate them.

The result equals ``to_pylist`` except for maps: a map in a struct field named in ``dict_maps``
becomes a dict (later keys win), any other map stays a list of ``(key, value)`` pairs, as
``to_pylist`` gives it. Structs inside lists and maps are kept as ``to_pylist`` gives them.
"""

from __future__ import annotations

from typing import Any, Iterable


def _keys(arr: Any) -> list:
    """One hashable value per element of ``arr`` (a pyarrow Array): None, a leaf, or nested tuples."""
    import pyarrow as pa

    t = arr.type
    n, nulls = len(arr), arr.null_count
    if nulls == n:
        return [None] * n
    nested = pa.types.is_struct(t) or _is_varlist(t)
    if nulls and nested:
        # convert the valid elements only (an action column of a checkpoint is mostly null)
        valid = arr.is_valid()
        keys = iter(_keys(arr.filter(valid)))
        return [next(keys) if ok else None for ok in valid.to_pylist()]
    if pa.types.is_struct(t):
        # flatten() applies the struct's own offset
        children = [_keys(c) for c in arr.flatten()]
        return list(zip(*children)) if children else [()] * n
    if nested:
        # offsets are absolute positions in the (unsliced) child array
        offsets = arr.offsets.to_pylist()
        lo, hi = offsets[0], offsets[-1]
        values = _keys(arr.values.slice(lo, hi - lo))
        return [tuple(values[a - lo:b - lo]) for a, b in zip(offsets, offsets[1:])]
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
    elif not nulls and (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
                        or pa.types.is_string(t) or pa.types.is_large_string(t)):
        return arr.to_numpy(zero_copy_only=False).tolist()  # same values as to_pylist, without scalars
    # other leaves, and nested types without offsets (fixed-size lists, unions): as to_pylist gives
    # them (a list value is unhashable, so such a row is simply not shared)
    return arr.to_pylist()


def _is_varlist(t: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t)


def _builder(t: Any, name: str | None, dict_maps: frozenset[str], top: bool):
    """A function turning one key of type ``t`` back into the Python value ``to_pylist`` gives."""
    import pyarrow as pa

    if pa.types.is_struct(t):
        fields = [(t.field(i).name, _builder(t.field(i).type, t.field(i).name, dict_maps, top))
                  for i in range(t.num_fields)]
        return lambda k: None if k is None else {n: b(x) for (n, b), x in zip(fields, k)}
    if pa.types.is_map(t):
        kb = _builder(t.key_type, None, dict_maps, False)
        ib = _builder(t.item_type, None, dict_maps, False)
        as_dict = top and name in dict_maps
        if as_dict:
            return lambda k: None if k is None else {kb(a): ib(b) for a, b in k}
        return lambda k: None if k is None else [(kb(a), ib(b)) for a, b in k]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        vb = _builder(t.value_type, None, dict_maps, False)
        return lambda k: None if k is None else [vb(x) for x in k]
    return lambda k: k


class RowReader:
    """Converts Arrow tables to lists of row dicts, sharing identical rows across every table it reads."""

    def __init__(self, dict_maps: Iterable[str] = ()) -> None:
        self.dict_maps = frozenset(dict_maps)
        self._seen: dict[tuple, dict] = {}

    def rows(self, table: Any) -> list[dict]:
        """The rows of ``table`` (a pyarrow Table) as dicts of column name to value."""
        names = table.column_names
        builders = [_builder(f.type, f.name, self.dict_maps, True) for f in table.schema]
        columns = [_keys(table.column(i).combine_chunks()) for i in range(table.num_columns)]
        out = []
        # the schema is part of the key: equal tuples under different column names are different rows
        schema_key = tuple(str(f) for f in table.schema)
        for key in (zip(*columns) if columns else [()] * table.num_rows):
            full = (schema_key, key)
            try:
                row = self._seen.get(full)
            except TypeError:  # a leaf type whose Python value is unhashable: no sharing for this row
                out.append({n: b(x) for n, b, x in zip(names, builders, key)})
                continue
            if row is None:
                row = {n: b(x) for n, b, x in zip(names, builders, key)}
                self._seen[full] = row
            out.append(row)
        return out
