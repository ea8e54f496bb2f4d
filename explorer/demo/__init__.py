"""The bundled demo workload: a simulated Mooncake-style trace, replayed through the engine
model for two engine versions, with templated maths eval cases bound to its requests.

Everything here is simulated; see DEMO_NOTE.
"""
from __future__ import annotations

DEMO_NOTE = ("Simulated demo workload: a synthetic multi-turn arrival trace fitted to the public "
             "Mooncake conversation trace, replayed through Trace Explorer's engine model for two "
             "engine versions, with generated maths eval cases and a planted effect; no real "
             "engine produced these numbers.")
