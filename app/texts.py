"""Every string on the app's main path, in one place, in plain words.

The main path is what a contributor sees without asking for more: the tray's
menu and tooltip, the wizard's pages, the status window's main view and the
notifications. Those speak of the computer helping answer questions for the
network; the engineering words (``FORBIDDEN_WORDS``) live only in the Details
view. ``tests/app/test_texts.py`` scans this catalogue and the rendered
main-path widgets for them, and checks that German and Spanish translate
every entry.

Pure Python (the status model imports it); the GUI installs Qt's translator
with :func:`set_translator`, so ``text(key)`` goes through
``QCoreApplication.translate`` in the ``"meshnet"`` context and the compiled
``app/translations/meshnet_<lang>.qm`` files.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from app.details_texts import DETAILS_TEXTS  # the engineer's views' words

CONTEXT = "meshnet"

# Words an engineer says and a contributor should never have to read (issue 22).
FORBIDDEN_WORDS: tuple[str, ...] = (
    "shard",
    "shards",
    "layer",
    "layers",
    "recipe",
    "recipes",
    "fingerprint",
    "digest",
    "admission",
    "gate",
    "gates",
    "dark",
    "certified",
    "capability",
    "registration",
    "reachability",
    "data plane",
    "identity key",
    "token",
    "tokens",
    "ws://",
    "wss://",
    "port",
)
# whole words: "report" and "darker" pass; "ws://" matches wherever an address starts
_FORBIDDEN = re.compile(
    "|".join(
        rf"(?<![\w/])({re.escape(word)})" + (r"(?!\w)" if word[-1].isalnum() else "")
        for word in sorted(FORBIDDEN_WORDS, key=len, reverse=True)
    ),
    re.IGNORECASE,
)


def forbidden_words_in(sentence: str) -> list[str]:
    """The engineering words in ``sentence`` (whole words, any case)."""
    return [match.group(0).lower() for match in _FORBIDDEN.finditer(sentence)]


TEXTS: dict[str, str] = {
    # --- the tray's menu and the status window's toolbar --------------------
    "action.contribute": "Contribute",
    "action.contribute.tip": "Let this computer help answer questions, or stop",
    "action.pause": "Pause for 1 hour",
    "action.resume": "Resume now",
    "action.pause.menu": "Pause",
    "action.pause.hour": "For 1 hour",
    "action.pause.until-resume": "Until I resume",
    "action.pause.until-restart": "Until the computer restarts",
    "action.network": "Network",
    "action.join-another": "Join another network…",
    "action.leave": "Leave this network…",
    "action.pause.tip": "Stop contributing for an hour, then carry on by itself",
    "action.check": "Check this computer…",
    "action.check.tip": "Test what this computer can do for the network",
    "action.status": "Status",
    "action.serves": "What this network serves",
    "action.settings": "Settings",
    "action.quit": "Quit",
    "action.quit.tip": "Stop contributing and close MeshNet",
    # --- states, one or two words --------------------------------------------
    "state.stopped": "Not contributing",
    "state.loading": "Getting ready",
    "state.probing": "Testing this computer",
    "state.admitting": "Getting ready",
    "state.starting": "Getting ready",
    "state.registering": "Joining the network",
    "state.serving": "Contributing",
    "state.reconnecting": "Reconnecting",
    "state.draining": "Stopping",
    "state.pausing": "Pausing",
    "state.paused": "Paused",
    "state.refused": "Not accepted",
    "state.error": "Stopped by a problem",
    # --- the tray's tooltip ---------------------------------------------------
    "tooltip.serving": "MeshNet — contributing: helping answer questions",
    "tooltip.serving.relay": "MeshNet — contributing through a relay: helping answer questions",
    "tooltip.stopped": "MeshNet — not contributing",
    "tooltip.other": "MeshNet — {state}",
    "tooltip.problem": "MeshNet — {state}: {sentence}",
    # --- the status window's banner: what is happening, and why ---------------
    "headline.stopped": "Not contributing",
    "sentence.stopped": "Click Start contributing to let this computer help answer questions "
    "for the network. It pauses by itself while you need the computer.",
    "headline.serving": "Contributing",
    "sentence.serving": "Thank you: this computer is helping the network answer questions.",
    "sentence.serving.model": "Thank you: this computer is helping the network answer "
    "questions with {model}.",
    "sentence.relay": "It connects through a relay, because the network cannot reach "
    "this computer directly (a home router usually blocks that).",
    "headline.paused": "Paused",
    "sentence.paused": "Contribution is paused; it carries on by itself.",
    "sentence.paused.released": "The memory MeshNet used was free again {seconds} seconds "
    "after the pause.",
    "headline.refused": "The network did not accept this computer",
    "headline.error": "Contribution stopped",
    "headline.draining": "Stopping",
    "sentence.draining": "Handing the answers under way to other computers, then leaving the "
    "network…",
    "sentence.loading": "Loading the model onto this computer…",
    "sentence.probing": "Checking that this computer gives correct answers…",
    "sentence.admitting": "Checking the test result…",
    "sentence.starting": "Getting ready to answer questions…",
    "sentence.registering": "Telling the network this computer is ready…",
    "sentence.reconnecting": "The connection to the network was lost; trying again…",
    "sentence.percent": "{sentence} ({percent}%)",
    # --- why it stopped, and what to do (the engineer's words go to Details) ---
    "why.out-of-memory": "This computer ran out of graphics memory. Check this computer "
    "again and choose to use more of its memory, or close other programs.",
    "why.too-little-memory": "This computer does not have enough free memory for this "
    "network's model right now. Close other programs, then click Retry.",
    "why.load-failed": "The model could not be loaded. Check this computer again; it "
    "fetches the model again if something is missing.",
    "why.test-failed": "This computer did not give correct answers in its test. Check "
    "this computer again; if it keeps failing, copy the details for whoever helps you.",
    "why.stale": "The last test of this computer was too old. Click Retry: MeshNet "
    "tests it again by itself.",
    "why.mismatch": "This computer's last test was for a different setup. Click Retry "
    "to test it again.",
    "why.network": "MeshNet could not reach the network. Check the internet "
    "connection, then click Retry.",
    "why.crashed": "MeshNet's helper program stopped unexpectedly. Click Retry; if "
    "it happens again, copy the details for whoever helps you.",
    "why.cannot-serve": "This computer passed its test, but part of MeshNet would not "
    "start on it. Update or reinstall MeshNet, then check this computer again.",
    "why.crashed-twice": "MeshNet's helper program stopped twice in a row, so MeshNet "
    "will not start it again by itself. Copy the diagnostics for whoever helps you.",
    "why.settings": "MeshNet could not start with the current settings. Open "
    "Settings and check them, then click Retry.",
    "why.not-joined": "This computer has not joined a network yet. Open an invite to join one.",
    "why.other": "Something went wrong. Click Retry; the details say more for whoever helps you.",
    "why.refused": "The network did not accept this computer this time. Click Retry; "
    "the details say why, for whoever helps you.",
    # --- the status window's buttons and numbers -------------------------------
    "button.start": "Start contributing",
    "button.stop": "Stop contributing",
    "button.retry": "Retry",
    "button.check": "Check this computer…",
    "button.settings": "Open settings",
    "button.join": "Join another network",
    "button.details": "&Details",
    "button.details.tip": "The technical steps, the log and the usage chart, for the "
    "curious and for whoever helps you",
    "button.serves": "What this network serves",
    "stat.today": "words written today",
    "stat.week": "this week",
    "stat.total": "in all",
    "stat.time": "contributing for",
    "stat.words.tip": "Words of answers this computer helped write, as the model counts "
    "them (a long word can count as two)",
    "status.contribution": "Your contribution",
    "status.network": "Network: {name}",
    "status.network.none": "No network joined yet",
    # --- credit: the status window's credit card and the tray's line -----------
    "credit.title": "Your credit",
    "credit.today": "credit today",
    "credit.week": "this week",
    "credit.total": "in all",
    "credit.rank": "rank on the leaderboard",
    "credit.tip": "Credit the network gives this computer for the answers it helped "
    "with and the network checked",
    "credit.waiting": "Your credit shows here once this computer has joined a network "
    "and started contributing.",
    "credit.forfeited": "The network took this computer's credit away because some of "
    "its answers were wrong. Check this computer again.",
    "credit.line": "Credit: {today} today, {total} in all, rank {rank}",
    "credit.line.forfeited": "Credit: taken away by the network",
    "credit.listed.both": "On the leaderboard as {name}, team {team}",
    "credit.listed.name": "On the leaderboard as {name}",
    "credit.listed.team": "On the leaderboard in team {team}",
    # --- the main view's cost and reward (app/machine_use.py, app/week_summary.py) ---
    "use.title": "What this computer gives now",
    "use.none": "MeshNet uses nothing on this computer while it is not contributing.",
    "use.unknown": "MeshNet cannot measure how much of this computer it uses right now.",
    "use.gpu": "Using {used} of {total} of graphics memory.",
    "use.gpu.busy": "Using {used} of {total} of graphics memory; the graphics card is {busy} busy.",
    "use.cpu": "Using {ram} of memory and {cpu} of the processor.",
    "use.cpu.memory": "Using {ram} of memory.",
    "use.tip": "Measured every few seconds from MeshNet's own programs; the rest of the "
    "computer is yours.",
    "earn.title": "What it earns",
    "credit.earned": "This computer earned {today} credit today and {week} this week.",
    "credit.none-yet": "No credit yet: it comes once the network has checked this "
    "computer's answers.",
    "credit.buys": "Credit puts your own questions first in line when the network is "
    "busy: {credit} credit is about {words} words of answers.",
    "credit.explain": "While it helps, this computer earns credit, which puts your own "
    "questions first in line when the network is busy.",
    "week.title": "The last 7 days",
    "week.today": "Today",
    "week.nothing": "nothing written",
    "week.day": "{words} words in {hours} hours",
    "week.day.one": "{words} words in 1 hour",
    "week.empty": "Nothing written this week yet.",
    "week.total": "{words} words in {hours} hours this week.",
    # --- the leaderboard: an optional name and team (wizard, settings, Details) ---
    "leaderboard.title": "Show your name on the leaderboard (optional)",
    "leaderboard.intro": "The network keeps a list of how much each computer has "
    "helped. Leave both empty to be listed by number only.",
    "leaderboard.name": "&Your name:",
    "leaderboard.name.name": "Your name on the leaderboard",
    "leaderboard.name.hint": "such as Ada",
    "leaderboard.team": "&Team:",
    "leaderboard.team.name": "Your team on the leaderboard",
    "leaderboard.team.hint": "such as Riverside Makers",
    "leaderboard.done": "Your name and team are on the network's leaderboard.",
    "leaderboard.cleared": "Your name and team are no longer on the leaderboard.",
    "leaderboard.refused": "The network did not accept your name for the leaderboard. "
    "MeshNet asks again the next time this computer connects.",
    "leaderboard.unreachable": "MeshNet could not reach the network to put your name on "
    "the leaderboard. It tries again the next time this computer connects.",
    # --- notifications --------------------------------------------------------
    "notify.contributing": "Contributing",
    "notify.contributing.again": "Contributing again",
    "notify.contributing.text": "This computer is helping the network answer questions.",
    "notify.paused": "Contribution paused",
    "notify.refused": "Not accepted",
    "notify.ready": "Ready to answer",
    "notify.ready.text": "The network can now answer questions with {model}, with this "
    "computer's help.",
    # --- the wizard: joining a network -------------------------------------------
    "join.title": "Join a network",
    "join.subtitle": "A network is a group of computers that answer questions together. "
    "Paste the invite you were sent to see who runs it before you join.",
    "join.another": "Join another network",
    "join.one": "Join a network",
    "join.link": "&Invite link:",
    "join.link.name": "Invite link",
    "join.show": "Show network",
    "join.show.name": "Show the network this invite is for",
    "join.advanced": "I run my own tracker (Advanced)",
    "join.advanced.name": "I run my own tracker",
    "join.address": "Network &address:",
    "join.code": "Invite &code:",
    "join.join": "Join this network",
    "join.own": "This computer uses your own tracker at {url} (Settings, Advanced). "
    "Press Next to continue, or join a network.",
    "join.part-of": "This computer is part of {network}. Press Next to continue, or join "
    "another network.",
    "join.run-by": "Run by {operator}",
    "join.no-operator": "The organiser gave no name.",
    "join.serves": "Answers questions with: {models}",
    "join.explain": "Joining lets this computer help answer questions for this network while "
    "you are not using it. You can pause or leave at any time.",
    "join.type-both": "Type the network's address and the invite code.",
    "join.paste": "Paste the invite link you were sent.",
    "join.looking": "Looking up the network…",
    "join.joining": "Joining {network}…",
    "join.the-network": "the network",
    "join.joined": "You joined {network}. Press Next to check this computer.",
    "join.network-by": "{name} (run by {operator})",
    # --- the wizard -------------------------------------------------------------
    "wizard.title": "MeshNet — check this computer",
    "wizard.finish": "Finish",
    "welcome.title": "Check this computer",
    "welcome.one": "MeshNet lets this computer help answer questions for the network "
    "while you are not using it.",
    "welcome.two": "This check looks at your computer, gets the model if it is not here "
    "yet, and runs a real test. It takes a few minutes and you can stop it at any time.",
    "hardware.title": "Your computer",
    "hardware.cancel": "Cancel check",
    "hardware.looking": "Looking at this computer…",
    "hardware.device": "&Graphics card:",
    "hardware.memory": "&Memory:",
    "hardware.disk": "&Free disk:",
    "hardware.model": "Mo&del:",
    "hardware.gpu": "{name}, graphics card: {free} free of {total}",
    "hardware.cpu": "{name}, processor (no graphics card found): {free} free of {total}",
    "hardware.ram": "{free} available of {total}",
    "hardware.disk.free": "{free} free for models",
    "hardware.model.here": "{model}, already on this computer",
    "hardware.model.missing": "{model}, fetched in the next step",
    "hardware.done": "This is what MeshNet found. Next: choose how much of this computer to use.",
    "hardware.failed": "The check of this computer did not finish. Try again, or open Settings.",
    "memory.title": "How much of this computer to use",
    "memory.intro": "MeshNet uses only the share you choose, so there is room left for "
    "games and other programs. The network decides which part of the model this "
    "computer holds.",
    "memory.gpu": "Use up to:",
    "memory.little": "&A little of my graphics memory (about {size})",
    "memory.half": "&Half of my graphics memory (about {size}) — room for games",
    "memory.most": "M&ost of my graphics memory (about {size})",
    "memory.little.cpu": "&A little of my memory (about {size})",
    "memory.half.cpu": "&Half of my memory (about {size})",
    "memory.most.cpu": "M&ost of my memory (about {size})",
    "memory.too-little": "That is too little memory for this network's model; choose more.",
    "memory.holds.all": "With this choice this computer can hold the whole model.",
    "memory.holds.part": "With this choice this computer holds part of the model; "
    "other computers hold the rest.",
    "memory.asking": "Asking the network which part it needs most…",
    "memory.network": "The network chose the part it needs most.",
    "memory.network.failed": "The network did not answer, so MeshNet chose a part that "
    "fits this computer.",
    "child.cancel": "Cancel",
    "child.retry": "&Try again",
    "child.stopping": "Stopping…",
    "child.stopped": "Stopped. Nothing was changed on this computer.",
    "import.title": "Getting the model",
    "import.cancel": "Cancel download",
    "import.preparing": "Preparing the model for this computer…",
    "import.failed": "The model could not be prepared. Check the free disk space, then try again.",
    "import.ready": "The model is ready on this computer. Next: the test.",
    "import.cancelled": "Cancelled. Nothing was saved; you can try again whenever you like.",
    "test.title": "Testing this computer",
    "test.cancel": "Cancel test",
    "test.running": "Loading the model and running a real test with it…",
    "test.finished": "The test has finished.",
    "test.cancelled": "Test cancelled. Nothing was saved; try again when you are ready.",
    "result.title": "Test result",
    "result.passed": "Passed: this computer is ready to contribute.",
    "result.speed": "It answered at about {speed} words per second.",
    "result.speed.none": "It gave correct answers.",
    "result.finish": "Finish saves this and, with the box ticked, starts contributing.",
    "result.running": "Contribute is already on; it uses this the next time it starts.",
    "result.start": "&Start contributing now",
    "result.failed": "The test did not pass.",
    "result.failed.why": "The test stopped without saying why.",
    "result.failed.advice": "What to do: go back and choose to use more of this computer's "
    "memory, or close other programs, then test again. Nothing was changed.",
    "result.back": "Choose how much &memory to use",
    "result.details": "Show &details",
    "result.details.hide": "Hide &details",
    # --- what this network serves ------------------------------------------------
    "serves.title": "What this network serves",
    "serves.intro": "The models this network answers questions with, and how many "
    "computers help with each.",
    "serves.ready": "Ready to answer",
    "serves.not-ready": "Not ready yet: it needs more computers",
    "serves.computers": "{count} computers help",
    "serves.computer": "1 computer helps",
    "serves.none": "This network has not said what it serves yet.",
    "serves.failed": "MeshNet could not ask the network: {sentence}",
    "serves.loading": "Asking the network…",
    "serves.refresh": "&Refresh",
    "serves.close": "&Close",
    # --- the pause rules: the status window's line under the numbers -----------
    "pause.none": "Contributing: no pause rule applies",
    "pause.program": "Paused while {name} runs",
    "pause.programs": "Paused while {names} and {last} run",
    "pause.gpu-busy": "Paused: the graphics card is busy with another program",
    "pause.battery": "Paused: running on battery",
    "pause.gpu-hot": "Paused: graphics card at {temp} °C (limit {limit} °C)",
    "pause.idle": "Waiting until this computer has been idle for {minutes} minutes",
    "pause.idle.one": "Waiting until this computer has been idle for 1 minute",
    "pause.resuming": "Resuming soon: no pause rule applies any more",
    "pause.hour": "Paused at your request until {until}.",
    "pause.until-resume": "Paused at your request until you resume.",
    "pause.until-restart": "Paused at your request until this computer restarts.",
    "leave.none": "This computer is not part of a network, so there is nothing to leave.",
    "leave.confirm": "Leave {name}? This computer stops contributing to it and forgets its invite.",
    "leave.done": "You left {name}. Kept on this computer: its key, your settings and "
    "the record of what it contributed. Join a network again with an invite.",
    # --- durations (the status window's "contributing for", the report's age) -------
    "duration.seconds": "{count} s",
    "duration.minutes": "{count} min",
    "duration.hours": "{hours} h {minutes} min",
    "duration.days": "{days} d {hours} h",
    # --- the apology for an unexpected error (app/ui/errors.py) --------------------
    "apology": "Something went wrong inside MeshNet. Your contribution settings are safe; "
    "try again, and if it keeps happening use {copy} in the Status window.",
    "apology.where": "The details are in {path}.",
    "settings.need-change": "Your settings need a change before contributing: {sentence}",
    "test.could-not-run": "The test could not run.",
    # --- a refused join, by reason code (app/network_join.py) -------------------------
    "join.refused.invite-used-up": "This invite has already been used as many times as it "
    "allows. Ask the person who invited you for a new one.",
    "join.refused.invite-expired": "This invite has expired. Ask the person who invited you "
    "for a new one.",
    "join.refused.invite-revoked": "This invite was withdrawn by the network's organiser. "
    "Ask them for a new one.",
    "join.refused.invite-unknown": "This network does not know that invite. Check that you "
    "copied all of it, or ask for a new one.",
    "join.refused.tracker-key-mismatch": "This link does not lead to the network it was made "
    "for, so nothing was sent. Ask the person who invited you for a fresh link.",
    "join.refused.bad-tracker-answer": "The network's answer could not be trusted, so nothing "
    "was saved. Try again later, or ask for a fresh link.",
    "join.refused.bad-invite-link": "That is not a whole invite link. Copy all of it: it "
    "starts with meshnet://join?",
    "join.refused.bad-network-address": "Type the network's address as its organiser gave it, "
    "starting with https:// or http://.",
    "join.refused.bad-invite-code": "Type the invite code as you were given it (letters, "
    "digits and dashes).",
    "join.refused.tracker-unreachable": "The network could not be reached. Check this "
    "computer is online and try again.",
    "join.none-yet": "This computer has not joined a network yet. Paste the invite you were "
    "sent on the Join a network page (Check this computer…), then press Contribute again.",
    # --- sizes -------------------------------------------------------------------
    "size.gb": "{size} GB",
    "size.unknown": "unknown",
    "percent": "{value}%",
    # --- the node's progress, by its stage code (app/event_words.py) ----------------
    "event.progress.import": "Preparing the model for this computer…",
    "event.progress.fetch": "Downloading the model…",
    "event.progress.load": "Loading the model…",
    "event.progress.probe": "Testing this computer…",
    "event.progress.count": "{sentence} {percent}",
    # --- Settings' simple page (app/ui/screens/settings/computer_page.py) ------------
    "settings.tab.advanced": "Advanced",
    "settings.card.found": "MeshNet found this graphics card when it checked this computer.",
    "settings.card.none": "Check this computer to list its graphics card here.",
    "settings.card.advanced": "Chosen on the Advanced page: {device}.",
    "settings.memory.unit": " GB",
    "settings.memory.hint": "The most memory MeshNet may use; the rest stays free for games "
    "and other programs.",
    "problem.memory.gb": "{size} is too little memory for MeshNet: choose at least {least}, "
    "or No limit.",
}


def _untranslated(_context: str, source: str) -> str:
    return source


def _plain_number(value: float, decimals: int) -> str:
    return f"{value:,.{decimals}f}"


_translate: Callable[[str, str], str] = _untranslated
_number: Callable[[float, int], str] = _plain_number


def set_number_formatter(formatter: Callable[[float, int], str]) -> None:
    """Format every :func:`number` with ``formatter(value, decimals)`` (the GUI passes
    one built on QLocale, so German shows 63.040 and 18,42)."""
    global _number
    _number = formatter


_language = "en"


def set_language(name: str) -> None:
    """Remember the language in use ("en", "de", "es"), for dates and day names."""
    global _language
    _language = name


def language() -> str:
    """The language in use; widgets build their QLocale from it."""
    return _language


def number(value: float, decimals: int = 0) -> str:
    """``value`` with the chosen language's digit grouping and decimal mark."""
    return _number(value, decimals)


def percent(value: float) -> str:
    """ "40%" in English, "40 %" in German and Spanish (whole percent)."""
    return text("percent", value=number(round(value)))


def _source(key: str) -> str:
    if key in TEXTS:
        return TEXTS[key]
    return DETAILS_TEXTS[key]


def set_translator(translate: Callable[[str, str], str]) -> None:
    """Route every :func:`text` through ``translate(context, source)`` (Qt's, in the GUI)."""
    global _translate
    _translate = translate


def text(key: str, **values: object) -> str:
    """The catalogue's string ``key``, translated, with ``values`` filled in."""
    source = _source(key)
    translated = _translate(CONTEXT, source) or source
    return translated.format(**values) if values else translated


def plain(key: str) -> str:
    """``text(key)`` without the ``&`` that marks a keyboard shortcut."""
    return text(key).replace("&", "")
