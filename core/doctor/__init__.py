"""Proving a computer: what it has, which layers fit, and a real forward that shows it works.

    hardware.py          what this machine has (RAM, GPU memory, a memory cap) and how
                         many layers of a model fit, read from the weights' headers
    hardware_report.py   `meshnet-node hardware --json`: the machine and a suggested
                         range, before any loading (the wizard's "hardware found" page)
    checkup.py           run_doctor: the whole flow the CLI and the wizard call: resolve
                         the model, measure, choose the range, load, probe, save the report
    probe.py             the bounded real forward through the loaded shard (finite,
                         deterministic, incremental decode agrees with the full forward)
    serving_check.py     the last step: start the data plane once on loopback and dial it
    capability.py        CapabilityReport: what one run proved, for exactly which selection
    admission_gate.py    fail closed: does a fresh passing report cover this selection?
    placement_advice.py  which layers to serve when none were given: ask the tracker,
                         else the largest range that fits locally

Lower floors: core.runtime, core.models, core.recipes, core.progress, core.paths,
core.errors; placement_advice asks the tracker through core.network, serving_check
starts core.dataplane. The node (core.node.proving, core.node.placement) calls it;
it never reaches up into core.node or core.jobs (tests/test_architecture.py).
"""
