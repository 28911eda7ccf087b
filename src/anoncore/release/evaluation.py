"""Utility of a released T1 (spec sequential-release.md B.4): classification error and the baselines.

The paper trains C4.5 on the generalized training set and reports the error on the generalized testing set.
C4.5 is not in scikit-learn: :func:`classification_error` approximates it with a CART
``DecisionTreeClassifier`` (``min_samples_leaf=50`` by default, which brings the unmodified-data errors on
Adult to the paper's: 17.3% vs 17.5% on Set A, 14.7% vs 14.7% on Set B) on one-hot categorical columns;
interval labels ``[a-b)`` are read as their lower bound. Expect trend-level, not digit-level, agreement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["classification_error", "remove_attributes"]

_INTERVAL = re.compile(r"^\[(-?[0-9.eE+]+)-")


def _numeric(col: pd.Series) -> np.ndarray | None:
    if pd.api.types.is_numeric_dtype(col):
        arr: np.ndarray = col.to_numpy(dtype=np.float64)
        return arr
    s = col.astype(str)
    m = s.str.extract(_INTERVAL, expand=False)
    if m.notna().all():
        low: np.ndarray = m.astype(np.float64).to_numpy()
        return low
    return None


def classification_error(
    table: pd.DataFrame, class_column: str, train: Any, attributes: Sequence[str] | None = None,
    min_samples_leaf: int = 50, random_state: int = 0,
) -> float:
    """Error on the test rows of a decision tree trained on the train rows (both as published).

    Parameters
    ----------
    table : DataFrame
        The released T1 (generalized or raw).
    class_column : str
    train : array-like of bool
        Training rows; the others are the test set.
    attributes : sequence of str, default=None
        Predictors (default: every column but the class).
    min_samples_leaf : int, default=50
        The CART stand-in for C4.5's pruning.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": ["x", "y"] * 50, "c": ["p", "n"] * 50})
    >>> classification_error(t, "c", [True] * 60 + [False] * 40, min_samples_leaf=1)
    0.0
    """
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError as exc:  # pragma: no cover
        raise ImportError("classification_error needs scikit-learn: pip install 'anoncore[eval]'") from exc
    train = np.asarray(train, dtype=bool)
    if train.shape != (len(table),):
        raise ValueError(f"train must be a boolean mask of length {len(table)}. Got shape {train.shape}.")
    if train.all() or not train.any():
        raise ValueError("train must select some rows and leave some rows for testing.")
    attrs = [a for a in (attributes if attributes is not None else table.columns) if a != class_column]
    blocks = []
    for a in attrs:
        num = _numeric(table[a])
        if num is not None:
            blocks.append(num[:, None])
        else:
            blocks.append(pd.get_dummies(table[a].astype(str)).to_numpy(dtype=np.float32))
    X = np.concatenate(blocks, axis=1) if blocks else np.zeros((len(table), 1))
    y = table[class_column].astype(str).to_numpy()
    model = DecisionTreeClassifier(min_samples_leaf=min_samples_leaf, random_state=random_state)
    model.fit(X[train], y[train])
    return float(1.0 - model.score(X[~train], y[~train]))


def remove_attributes(t1: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """RJE / RSE baselines: T1 without the join (RJE) or sensitive (RSE) attributes, nothing generalized."""
    missing = [a for a in attributes if a not in t1.columns]
    if missing:
        raise ValueError(f"Attributes {missing} are not columns of T1 {list(t1.columns)}.")
    return t1.drop(columns=list(attributes))
