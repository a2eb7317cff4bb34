"""jostle: packing by contact simulation, on the CPU or a CUDA GPU.

    import jostle
    p = jostle.pack_circles(range(1, 11), time=30, target=jostle.circles_record(10))
    print(p.R, p.record, p.stopped_by)

pack_circles: the smallest circle around circles of given radii.
trunk_volume: as many 200 x 100 x 50 mm blocks as fit into a trunk mesh (liters).
Scene: rigid spheres, boxes and planes with friction, stepped in time.

Arrays in and out are numpy arrays (any sequence of numbers is taken in).
Failures raise jostle.Error with jostle's message (jostle.InputError, also a
ValueError, for bad input). Ctrl-C (KeyboardInterrupt) stops a search within
about a second and returns the best found so far, with stopped_by "signal".
"""

from ._jostle import Error, InputError
from ._jostle import cuda_device_count, version
from .circles import Circles, circles_record, pack_circles
from ._run import Progress
from .scene import Body, Scene, box, plane, sphere
from .trunk import Trunk, trunk_volume

__version__ = version()

__all__ = [
    "Body", "Circles", "Error", "InputError", "Progress", "Scene", "Trunk", "box",
    "circles_record", "cuda_device_count", "pack_circles", "plane", "sphere", "trunk_volume",
    "version",
]
