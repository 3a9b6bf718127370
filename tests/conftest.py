import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

#: ``pytester`` runs pytest in-process on the example tests and the corpus plugin
pytest_plugins = ["pytester"]
