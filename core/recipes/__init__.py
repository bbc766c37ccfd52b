"""Recipes: the model artifact plus the runtime settings that change what the numbers are.

    catalogue.json       the recipes this node ships (package data: pyproject.toml,
                         installers/meshnet.spec collects it with core's data files)
    catalogue.py         read the catalogue; the axes of the recipe really loaded
    recipe_identity.py   the axes, the three digests and the identity block a node
                         presents (wire contract, re-derived by the tracker)

Lower floors: core.identity.signing (canonical JSON), core.errors. The doctor,
the node and the one-process generator read it; it reads none of them.
"""
