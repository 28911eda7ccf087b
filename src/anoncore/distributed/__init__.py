"""Tables larger than memory on Dask: frequency sets merged by tree reduction, the optimal lattice search on
them (the same optimum as in memory), publishing by ``map_partitions`` and a distributed audit.

Needs the optional extra ``anoncore[dask]`` (``dask``, ``distributed``); see docs/distributed.md.
"""

from anoncore.distributed.frequency import FrequencySet
from anoncore.distributed.search import FrequencyResult, lattice_search

__all__ = ["FrequencyResult", "FrequencySet", "lattice_search"]
