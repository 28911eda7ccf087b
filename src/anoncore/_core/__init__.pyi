"""
anoncore compiled kernels (private; use the anoncore package)
"""

from . import burel as burel
from . import castle as castle
from . import core as core
from . import criteria as criteria
from . import datasets as datasets
from . import distance as distance
from . import graph as graph
from . import lattice as lattice
from . import metrics as metrics
from . import mondrian as mondrian
from . import release as release
from . import risk as risk
from . import sabre as sabre
from . import sabre_w as sabre_w
from . import sequence as sequence
from . import temporal as temporal
from . import workload as workload

__version__: str = "0.1.0"
has_openmp: bool
