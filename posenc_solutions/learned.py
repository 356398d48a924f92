"""Exercises 2 and 8: learned absolute position tables.

Token plus position addition (ex02), and the parameter cost and resizing of
position tables (ex08).
"""

import numpy as np


def add_positions(token_embeddings, position_table, start=0):
    r"""Add absolute position vectors to token embeddings.

    .. math::
        h_{\ell} = e_{\ell} + P[\text{start} + \ell]

    Parameters
    ----------
    token_embeddings : array_like, shape (..., L, d)
        Token embeddings, ``ndim >= 2``.
    position_table : array_like, shape (P, d)
        One row per position, learned or sinusoidal.
    start : int, optional
        Position of the first token: 0 for a new sequence; when a model continues one,
        the number of real tokens before it (the cache length only when nothing is padded).

    Returns
    -------
    ndarray, shape (..., L, d)
        ``token_embeddings + position_table[start:start+L]``.

    Raises
    ------
    ValueError
        If `token_embeddings` has ``ndim < 2``, `position_table` is not 2-D, the
        widths differ, `start` is not an integer >= 0, or ``start + L > P`` (the
        table is too short: the message mentions the table length, ``P`` or its
        value).

    Examples
    --------
    >>> tokens = np.zeros((2, 3, 4))
    >>> table = np.arange(20.0).reshape(5, 4)
    >>> print(add_positions(tokens, table, start=1)[0])
    [[ 4.  5.  6.  7.]
     [ 8.  9. 10. 11.]
     [12. 13. 14. 15.]]
    """
    tokens = np.asarray(token_embeddings)
    table = np.asarray(position_table)
    if tokens.ndim < 2:
        raise ValueError(f"token_embeddings must have shape (..., L, d), got shape {tokens.shape}")
    if table.ndim != 2:
        raise ValueError(f"position_table must be 2-D (P, d), got shape {table.shape}")
    length, width = tokens.shape[-2:]
    num_positions = table.shape[0]
    if table.shape[1] != width:
        raise ValueError(f"width mismatch: token embeddings have d={width}, position_table has d={table.shape[1]}")
    if (isinstance(start, (bool, np.bool_)) or not isinstance(start, (int, float, np.integer, np.floating))
            or start % 1 != 0 or start < 0):
        raise ValueError(f"start must be an integer >= 0, got {start!r}")
    if start + length > num_positions:
        raise ValueError(
            f"positions {start}..{start + length - 1} are out of range: "
            f"the position table only has P={num_positions} rows"
        )
    return np.add(tokens, table[start:start + length], dtype=np.result_type(tokens, table, 1.0))


def learned_table_parameters(max_positions, d_model):
    """Number of parameters in a learned absolute position table.

    Parameters
    ----------
    max_positions : int
        Number of positions the table covers, >= 0.
    d_model : int
        Width of each row, >= 0.

    Returns
    -------
    int
        ``max_positions * d_model``.

    Raises
    ------
    ValueError
        If `max_positions` or `d_model` is not an integer >= 0.

    Examples
    --------
    >>> learned_table_parameters(1024, 768)
    786432
    """
    for name, value in (("max_positions", max_positions), ("d_model", d_model)):
        if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating))
                or value % 1 != 0 or value < 0):
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(max_positions) * int(d_model)


def position_parameter_count(scheme, *, d_model, num_heads, num_layers,
                             max_positions=0, num_buckets=32, max_distance=16):
    """Number of positional parameters a scheme adds to a whole model.

    Parameters
    ----------
    scheme : {"learned", "sinusoidal", "rope", "alibi", "t5", "shaw"}
        The positional scheme.
    d_model, num_heads, num_layers : int
        Model width, heads per layer and number of layers.
    max_positions : int, optional
        Rows of a learned table.
    num_buckets : int, optional
        T5 buckets: one ``(num_buckets, num_heads)`` table shared by all layers.
    max_distance : int, optional
        Shaw clipping distance K: tables of ``2K + 1`` rows of width
        ``d_model // num_heads``, one for keys and one for values, per layer.

    Returns
    -------
    int
        The parameter count.

    Raises
    ------
    ValueError
        For an unknown `scheme` name, or, for ``"learned"``, if `max_positions` is not an
        integer >= 0.

    Examples
    --------
    >>> position_parameter_count("learned", d_model=768, num_heads=12, num_layers=12,
    ...                          max_positions=1024)
    786432
    >>> position_parameter_count("t5", d_model=512, num_heads=8, num_layers=6)
    256
    >>> position_parameter_count("rope", d_model=4096, num_heads=32, num_layers=32)
    0
    """
    counts = {
        "learned": lambda: learned_table_parameters(max_positions, d_model),
        "sinusoidal": lambda: 0,
        "rope": lambda: 0,
        "alibi": lambda: 0,
        "t5": lambda: num_buckets * num_heads,
        "shaw": lambda: num_layers * 2 * (2 * max_distance + 1) * (d_model // num_heads),
    }
    if scheme not in counts:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {sorted(counts)}")
    return int(counts[scheme]())


def interpolate_position_table(table, new_num_positions):
    """Resize a position table by linear interpolation along positions.

    The endpoints stay aligned: new row ``r`` is the old table read at the
    fractional position ``r * (P - 1) / (P' - 1)``.

    Parameters
    ----------
    table : array_like, shape (P, d)
        The table, ``P >= 2``.
    new_num_positions : int
        ``P'``, the number of rows wanted, >= 2.

    Returns
    -------
    ndarray, shape (P', d)
        The resized table.

    Raises
    ------
    ValueError
        If `table` is not 2-D or ``P < 2``, or `new_num_positions` is not an integer >= 2.

    Examples
    --------
    >>> print(interpolate_position_table([[0.0], [10.0]], 5).ravel())
    [ 0.   2.5  5.   7.5 10. ]
    """
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] < 2:
        raise ValueError(f"table must be 2-D with at least 2 rows, got shape {table.shape}")
    if (isinstance(new_num_positions, (bool, np.bool_))
            or not isinstance(new_num_positions, (int, float, np.integer, np.floating))
            or new_num_positions % 1 != 0 or new_num_positions < 2):
        raise ValueError(f"new_num_positions must be an integer >= 2, got {new_num_positions!r}")
    old_len = table.shape[0]
    where = np.arange(int(new_num_positions)) * (old_len - 1) / (new_num_positions - 1)
    lower = np.minimum(np.floor(where).astype(np.int64), old_len - 2)
    frac = (where - lower)[:, None]
    return table[lower] * (1.0 - frac) + table[lower + 1] * frac
