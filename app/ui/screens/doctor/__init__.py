"""The doctor wizard: hardware → layers → model import → real test forward → result.

``wizard.py`` is the shell (page order, Back, Finish, screenshot samples);
each page lives in its own module; ``state.py`` holds what they share
(:class:`~app.ui.screens.doctor.state.WizardState`) and ``child_page.py`` the
base of the pages that run one ``meshnet-node`` child.
"""
