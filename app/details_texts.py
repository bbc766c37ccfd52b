"""The words of the engineer's views: Details, Settings and the Recipes window.

Kept apart from :data:`app.texts.TEXTS` because these may name gates, layers
and recipes (the plain-words test scans only the main path); they go through
the same :func:`app.texts.text` and the same translation catalogues, and
``tests/app/test_texts.py`` checks German and Spanish translate them too.
Pure Python, like app.texts.
"""

from __future__ import annotations

DETAILS_TEXTS: dict[str, str] = {
    # --- the status window's Details view ----------------------------------------
    "details.back": "← Back",
    "details.back.name": "Back to the status",
    "details.title": "Admission, step by step",
    "details.tokens": "tokens served",
    "details.sessions": "open sessions",
    "details.chart": "Tokens served, last 7 days",
    "details.chart.name": "Tokens served per hour over the last week",
    "details.chart.summary": "{total} tokens served in the last 7 days; busiest hour "
    "{when} ({best} tokens).",
    "details.chart.nothing": "No tokens served in the last 7 days yet.",
    "details.chart.fills": "This chart fills in while this computer contributes.",
    "details.log": "Node log",
    "details.log.empty": "The node's messages appear here while it runs.",
    "details.key-file.no-keyring": "This computer has no keyring, so MeshNet keeps its key "
    "and its batch-job sign-in in files only you can read, in {folder}.",
    "details.key-file": "MeshNet keeps this computer's key in a file only you can read: {path}.",
    "details.copy": "Copy diagnostics",
    "details.copy.tip": "Copy the status, the gates, the report and the last log lines, "
    "to paste into a message to someone helping you",
    "details.copied": "Diagnostics copied: paste them into your message.",
    "details.reason.tip": "Reason code, for whoever helps you",
    "gate-state.passed": "Passed",
    "gate-state.failed": "Failed",
    "gate-state.pending": "In progress",
    "gate-state.info": "For your information",
    "gate-state.waiting": "Not reached yet",
    "gate.identity": "Identity",
    "gate.placement": "Layers chosen",
    "gate.capability": "Capability report",
    "gate.admission": "Admission",
    "gate.data-plane": "Data plane",
    "gate.registration": "Registration",
    "gate.reachability": "Reachability",
    "gate.recipe": "Recipe",
    "gate.sessions": "Sessions",
    "gate.placement.fixed": "Layers {start}–{end}, as set in Settings.",
    "gate.not-checked": "Not checked yet.",
    "gate.not-reached": "Not reached.",
    "gate.report.fresh": "Report {age} old, stale in {left}.",
    "gate.report.stale": "Report {age} old: stale; Retry tests this computer again.",
    # --- the settings window -----------------------------------------------------
    "settings.title": "MeshNet settings",
    "settings.save": "Save",
    "settings.save-anyway": "Save anyway",
    "settings.tab.computer": "This computer",
    "settings.tab.pause": "Pause rules",
    "settings.url": "Tracker address:",
    "settings.url.name": "Tracker address",
    "settings.check": "Check",
    "settings.checking": "Checking {url}…",
    "settings.check.failed": "The check failed unexpectedly (it is logged); try again.",
    "settings.token": "Join token:",
    "settings.token.none": "No join token",
    "settings.token.show": "Show",
    "settings.token.note": "Only for a private tracker; kept in this computer's keyring.",
    "settings.token.failed": "The join token was not kept: {error}.",
    "settings.network.none": "This computer has not joined a network yet. Open Check this "
    "computer… and paste the invite you were sent.",
    "settings.network": "This computer is part of {network}. To join another network or "
    "leave this one, choose Join another network… or Leave this network… in MeshNet's menu.",
    "settings.device": "Device:",
    # --- the node's gate events, by their codes (app/event_words.py) ----------------
    "event.gate.identity": "Identity key ready: {node}",
    "event.gate.capability": "This computer computed layers {start}–{end} correctly at "
    "{speed} tokens/s.",
    "event.gate.admission": "Admitted: the report matches the loaded shard.",
    "event.gate.data-plane": "Listening for other nodes at {endpoint}.",
    "event.gate.registration": "Registered with the tracker.",
    "event.gate.reachability": "Other nodes can reach this computer.",
    "event.gate.relay": "Serving through a relay: the tracker could not reach this "
    "computer directly.",
    "event.gate.sessions": "{sessions} open sessions, {tokens} tokens served.",
    "settings.device.own.hint": "Empty: the card chosen on This computer; or cuda:1, mps, cpu",
    "settings.device.own.name": "Device, as the node names it",
    "settings.advanced.intro": "For people who run their own network or try other models. "
    "Most people need only the first two pages.",
    "settings.device.best": "Best available",
    "settings.device.cpu": "Processor (CPU)",
    "settings.device.nvidia": "NVIDIA graphics card",
    "settings.device.apple": "Apple graphics",
    "settings.device.found": "The graphics card is the one the doctor found; type cuda:1 "
    "for a second one.",
    "settings.device.none": "Run the doctor to list this computer's graphics card, or type "
    "one (cuda:0).",
    "settings.model": "Model:",
    "settings.model.default": "The default model (SmolLM2-135M-Instruct)",
    "settings.model.browse": "Choose folder…",
    "settings.model.choose": "Choose a model folder",
    "settings.model.download": "Download from Hugging Face…",
    # --- the settings window's Hugging Face download (app/ui/screens/settings/hub_download.py)
    "hub.title": "Download a model",
    "hub.intro": "Type the name of a model on Hugging Face, as its address shows it after "
    "huggingface.co/, such as {example}. MeshNet downloads only the files it needs.",
    "hub.name": "Model name:",
    "hub.revision": "Version:",
    "hub.revision.hint": "main (the newest)",
    "hub.revision.tip": "A branch, tag or commit of the model; leave it empty for the newest.",
    "hub.download": "&Download",
    "hub.close": "Close",
    "hub.bad-name": "Type the model's name as ORGANISATION/NAME, such as {example}: the part "
    "of its address after huggingface.co/.",
    "hub.bad-revision": "A version has no spaces: type a branch, tag or commit, or leave the "
    "field empty for the newest.",
    "hub.looking-up": "Looking up {repo} on Hugging Face…",
    "hub.downloading-file": "Downloading {file}… {percent} %",
    "hub.downloading": "Downloading the model… {percent} %",
    "hub.fetching": "Downloading {file}…",
    "hub.stopping": "Stopping the download…",
    "hub.cancelled": "Download cancelled. What arrived is kept, so downloading again "
    "continues where it stopped.",
    "hub.failed": "The download did not finish. Check the internet connection and the free "
    "disk space, then try again.",
    "hub.error.repo-not-found": "Hugging Face has no public model named {repo}. Check the "
    "spelling (copy the name from the model's page); a private or gated model needs a "
    "Hugging Face login on this computer first.",
    "hub.error.revision-not-found": "{repo} has no version {revision}. Leave the version "
    "empty for the newest, or copy a branch, tag or commit from the model's page.",
    "hub.error.hub-unreachable": "Hugging Face could not be reached. Check the internet "
    "connection, then try again; what arrived is kept.",
    "hub.error.hub-offline": "Downloads are switched off on this computer (HF_HUB_OFFLINE is "
    "set). Remove that setting, restart MeshNet and try again.",
    "hub.error.unsupported-architecture": "MeshNet cannot run this kind of model yet. Choose "
    "another one, such as a Llama, Qwen or Gemma model.",
    "settings.layers": "Layers:",
    "settings.layers.own": "Choose the layers myself (otherwise the doctor's suggestion)",
    "settings.layers.up-to": "up to",
    "settings.memory": "Memory limit:",
    "settings.memory.none": "No limit",
    "settings.login": "Start MeshNet when I log in",
    "settings.login.on-failed": "Could not turn on start at login ({error}): check that your "
    "user may change its login items, then try again.",
    "settings.login.off-failed": "Could not turn off start at login ({error}): check that your "
    "user may change its login items, then try again.",
    "settings.batch": "Run batch jobs when not serving",
    "settings.batch.tip": "While this computer is not serving a model, run the tracker's "
    "batch jobs (quality checks, bulk generation) in a sandboxed helper process.",
    "settings.gpu": "Graphics card:",
    "settings.gpu.busy": "Pause while another program keeps the graphics card busy",
    "settings.gpu.hot": "Pause when the graphics card is hotter than",
    "settings.layers.from.name": "First layer",
    "settings.layers.up-to.name": "Up to layer",
    "settings.idle.name": "Minutes without keyboard or mouse before contributing",
    "settings.token.name": "Join token",
    "settings.programs.name": "Program to add",
    "settings.programs.list.name": "Programs that pause contributing",
    "settings.gpu.unmeasured": "MeshNet cannot read this computer's graphics card (it can "
    "read NVIDIA cards only), so these two rules never pause it. Use the list of programs "
    "below instead.",
    "settings.programs": "Programs:",
    "settings.programs.intro": "Pause while any of these programs is running:",
    "settings.programs.hint": "Program file name, such as eldenring.exe",
    "settings.programs.add": "Add",
    "settings.programs.remove": "Remove",
    "settings.power": "Power:",
    "settings.battery": "Pause on battery power",
    "settings.idle": "Idle:",
    "settings.idle.after": "Contribute only after",
    "settings.idle.minutes": " minutes",
    "settings.idle.untouched": "without keyboard or mouse use",
    "settings.resumes": "Contributing resumes by itself once the reason has passed.",
    # --- the settings window: what is wrong with a field (app/settings_model.py) --------
    "problem.url.empty": "Enter the tracker's address, such as http://127.0.0.1:8765.",
    "problem.url.invalid": "The tracker address is not a valid URL: check it, such as "
    "http://127.0.0.1:8765.",
    "problem.url.scheme": "The tracker address must start with http:// or https://.",
    "problem.url.host": "The tracker address needs a host name, such as "
    "http://tracker.example.org.",
    "problem.program.empty": "Remove the empty program name, or type the program's file name.",
    "problem.program.path": "Enter only the program's file name, such as eldenring.exe, not a "
    "path: {name} contains a folder.",
    "problem.model": "Choose a model, or leave it empty to use the default model.",
    "problem.layers.start": "The first layer must be 0 or more: raise the first number.",
    "problem.layers.empty": "Layers {start}–{end} is an empty range: make the last layer larger "
    "than the first, such as {start}–{next}.",
    "problem.device": "Unknown device {device}: choose the CPU, a GPU (cuda:0, cuda:1, …) or mps.",
    "problem.gpu-temp": "Choose a GPU temperature between {low} and {high} °C ({temp} °C is "
    "outside that range).",
    "problem.idle": "Choose between {low} and {high} idle minutes ({idle} is outside that "
    "range), or turn the idle rule off.",
    "problem.label": "Use at most {count} letters, digits or signs on one line, or leave it empty.",
    # --- the settings window's tracker check (app/tracker_api.py) ------------------------
    "tracker.connected": "Connected to a MeshNet tracker: {nodes}, {recipes}.",
    "tracker.nodes.one": "1 live node",
    "tracker.nodes": "{count} live nodes",
    "tracker.recipes.one": "1 recipe",
    "tracker.recipes": "{count} recipes",
    "tracker.refused": "Nothing answers at {url}: check the address and port, and that the "
    "tracker is running.",
    "tracker.unreachable": "Could not reach {url} ({error}): check the address and your network "
    "connection.",
    "tracker.timeout": "{url} did not answer within {seconds} s: check the address, or try again "
    "when the network is less busy.",
    "tracker.unreadable": "Could not read {url} ({error}): check the address and try again.",
    "tracker.http": "{url} answered with HTTP {status} {phrase}: check the address, or ask the "
    "tracker's operator.",
    "tracker.http.network": "{url} answered with HTTP {status}: ask the network's organiser.",
    "tracker.not-meshnet": "{url} is not a MeshNet tracker ({why}): check the address and port.",
    "tracker.why.no-state-page": "it has no MeshNet state page",
    "tracker.why.not-json": "its answer is not JSON",
    "tracker.why.not-state": "its answer is not a MeshNet state",
    "tracker.why.no-time": "its state has no generated_at time",
    "tracker.why.no-list": "its state has no {name} list",
    "tracker.why.no-count": "its state has no live node count",
    "tracker.why.recipes": "its recipe list is not in the MeshNet shape",
    "tracker.why.allocation": "its layer suggestion is not in the MeshNet shape",
    "tracker.why.network": "its network answer is not in the MeshNet shape",
    "tracker.no-suggestion": "{url} cannot suggest layers (it does not know this model or is an "
    "older tracker); the suggestion below is from this computer alone.",
    "tracker.suggestion.failed": "{url} could not suggest layers (HTTP {status}).",
    "tracker.suggestion.failed.detail": "{url} could not suggest layers (HTTP {status}: {detail}).",
    # --- the node's state as the app itself words it (Details' log and state line) -------
    "node.starting": "Starting the node…",
    "node.stopping": "Stopping: handing open sessions to other computers and leaving the network…",
    "node.off": "Contribution is off.",
    "node.off.ended": "Contribution is off (the node had to be ended).",
    "node.cannot-start": "MeshNet could not start the node: {error}",
    "node.crashed": "The node stopped unexpectedly ({detail}). Retry, or run the doctor.",
    "node.crashed.ended": "it was ended or could not start",
    "node.crashed.code": "exit code {code}",
    "node.killed": "The node did not stop in time, so MeshNet ended it.",
    "node.start-failed": "The node could not start: {error}",
    # --- the recipes window ----------------------------------------------------------
    "recipes.title": "MeshNet recipes",
    "recipes.column.model": "Model",
    "recipes.column.recipe": "Recipe",
    "recipes.column.status": "Status",
    "recipes.column.model-digest": "Model digest",
    "recipes.column.recipe-digest": "Recipe digest",
    "recipes.column.certified-on": "Certified on",
    "recipes.column.nodes": "Nodes",
    "recipes.column.detail": "Detail",
    "recipes.certified": "Certified",
    "recipes.dark": "Dark",
    "recipes.certified.help": "Certified: a whole route of nodes produced matching output "
    "with this recipe.",
    "recipes.dark.help": "Dark: not certified yet. The tracker certifies it once a full "
    "route has proven it.",
    "recipes.filter": "Filter by model, recipe, status or digest",
    "recipes.legend": "★ marks the recipe this computer serves.",
    "recipes.served.tip": "This computer serves this recipe.",
    "recipes.layers": "{count} layers",
    "recipes.why-dark": "{detail} Why dark: {why}",
    "recipes.reading": "Reading recipes from {url}…",
    "recipes.updated": "Updated {time}: {count} recipes, {certified} certified, {dark} dark.",
    "recipes.empty": "The tracker knows no recipes yet: they appear once nodes register.",
    "recipes.failed": "Could not read recipes: {sentence}",
    "recipes.failed.kept": "Could not read recipes: {sentence} The list shows the last "
    "recipes read.",
    "recipes.failed.other": "Something went wrong reading the recipes; it is logged. Try Refresh.",
}
