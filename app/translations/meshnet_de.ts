<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
  <context>
    <name>meshnet</name>
    <message>
      <source>Contribute</source>
      <extracomment>action.contribute</extracomment>
      <translation>Mithelfen</translation>
    </message>
    <message>
      <source>Let this computer help answer questions, or stop</source>
      <extracomment>action.contribute.tip</extracomment>
      <translation>Diesen Computer beim Beantworten von Fragen helfen lassen, oder aufhören</translation>
    </message>
    <message>
      <source>Pause for 1 hour</source>
      <extracomment>action.pause</extracomment>
      <translation>1 Stunde pausieren</translation>
    </message>
    <message>
      <source>Resume now</source>
      <extracomment>action.resume</extracomment>
      <translation>Jetzt fortsetzen</translation>
    </message>
    <message>
      <source>Pause</source>
      <extracomment>action.pause.menu</extracomment>
      <translation>Pausieren</translation>
    </message>
    <message>
      <source>For 1 hour</source>
      <extracomment>action.pause.hour</extracomment>
      <translation>Für 1 Stunde</translation>
    </message>
    <message>
      <source>Until I resume</source>
      <extracomment>action.pause.until-resume</extracomment>
      <translation>Bis ich fortsetze</translation>
    </message>
    <message>
      <source>Until the computer restarts</source>
      <extracomment>action.pause.until-restart</extracomment>
      <translation>Bis zum Neustart des Computers</translation>
    </message>
    <message>
      <source>Network</source>
      <extracomment>action.network</extracomment>
      <translation>Netzwerk</translation>
    </message>
    <message>
      <source>Join another network…</source>
      <extracomment>action.join-another</extracomment>
      <translation>Einem anderen Netzwerk beitreten…</translation>
    </message>
    <message>
      <source>Leave this network…</source>
      <extracomment>action.leave</extracomment>
      <translation>Dieses Netzwerk verlassen…</translation>
    </message>
    <message>
      <source>Stop contributing for an hour, then carry on by itself</source>
      <extracomment>action.pause.tip</extracomment>
      <translation>Eine Stunde lang nicht mithelfen, danach von selbst weitermachen</translation>
    </message>
    <message>
      <source>Check this computer…</source>
      <extracomment>action.check, button.check</extracomment>
      <translation>Diesen Computer prüfen…</translation>
    </message>
    <message>
      <source>Test what this computer can do for the network</source>
      <extracomment>action.check.tip</extracomment>
      <translation>Testen, was dieser Computer für das Netzwerk leisten kann</translation>
    </message>
    <message>
      <source>Status</source>
      <extracomment>action.status, recipes.column.status</extracomment>
      <translation>Status</translation>
    </message>
    <message>
      <source>What this network serves</source>
      <extracomment>action.serves, button.serves, serves.title</extracomment>
      <translation>Was dieses Netzwerk anbietet</translation>
    </message>
    <message>
      <source>Settings</source>
      <extracomment>action.settings</extracomment>
      <translation>Einstellungen</translation>
    </message>
    <message>
      <source>Quit</source>
      <extracomment>action.quit</extracomment>
      <translation>Beenden</translation>
    </message>
    <message>
      <source>Stop contributing and close MeshNet</source>
      <extracomment>action.quit.tip</extracomment>
      <translation>Nicht mehr mithelfen und MeshNet schließen</translation>
    </message>
    <message>
      <source>Not contributing</source>
      <extracomment>state.stopped, headline.stopped</extracomment>
      <translation>Hilft nicht mit</translation>
    </message>
    <message>
      <source>Getting ready</source>
      <extracomment>state.loading, state.admitting, state.starting</extracomment>
      <translation>Wird vorbereitet</translation>
    </message>
    <message>
      <source>Testing this computer</source>
      <extracomment>state.probing, test.title</extracomment>
      <translation>Dieser Computer wird getestet</translation>
    </message>
    <message>
      <source>Joining the network</source>
      <extracomment>state.registering</extracomment>
      <translation>Tritt dem Netzwerk bei</translation>
    </message>
    <message>
      <source>Contributing</source>
      <extracomment>state.serving, headline.serving, notify.contributing</extracomment>
      <translation>Hilft mit</translation>
    </message>
    <message>
      <source>Reconnecting</source>
      <extracomment>state.reconnecting</extracomment>
      <translation>Verbindet neu</translation>
    </message>
    <message>
      <source>Stopping</source>
      <extracomment>state.draining, headline.draining</extracomment>
      <translation>Hört auf</translation>
    </message>
    <message>
      <source>Pausing</source>
      <extracomment>state.pausing</extracomment>
      <translation>Pausiert gleich</translation>
    </message>
    <message>
      <source>Paused</source>
      <extracomment>state.paused, headline.paused</extracomment>
      <translation>Pausiert</translation>
    </message>
    <message>
      <source>Not accepted</source>
      <extracomment>state.refused, notify.refused</extracomment>
      <translation>Nicht angenommen</translation>
    </message>
    <message>
      <source>Stopped by a problem</source>
      <extracomment>state.error</extracomment>
      <translation>Wegen eines Problems angehalten</translation>
    </message>
    <message>
      <source>MeshNet — contributing: helping answer questions</source>
      <extracomment>tooltip.serving</extracomment>
      <translation>MeshNet — hilft mit: beantwortet Fragen</translation>
    </message>
    <message>
      <source>MeshNet — contributing through a relay: helping answer questions</source>
      <extracomment>tooltip.serving.relay</extracomment>
      <translation>MeshNet — hilft über eine Weiterleitung mit: beantwortet Fragen</translation>
    </message>
    <message>
      <source>MeshNet — not contributing</source>
      <extracomment>tooltip.stopped</extracomment>
      <translation>MeshNet — hilft nicht mit</translation>
    </message>
    <message>
      <source>MeshNet — {state}</source>
      <extracomment>tooltip.other</extracomment>
      <translation>MeshNet — {state}</translation>
    </message>
    <message>
      <source>MeshNet — {state}: {sentence}</source>
      <extracomment>tooltip.problem</extracomment>
      <translation>MeshNet — {state}: {sentence}</translation>
    </message>
    <message>
      <source>Click Start contributing to let this computer help answer questions for the network. It pauses by itself while you need the computer.</source>
      <extracomment>sentence.stopped</extracomment>
      <translation>Klicken Sie auf „Mithelfen starten“, damit dieser Computer dem Netzwerk beim Beantworten von Fragen hilft. Er pausiert von selbst, wenn Sie ihn brauchen.</translation>
    </message>
    <message>
      <source>Thank you: this computer is helping the network answer questions.</source>
      <extracomment>sentence.serving</extracomment>
      <translation>Danke: Dieser Computer hilft dem Netzwerk, Fragen zu beantworten.</translation>
    </message>
    <message>
      <source>Thank you: this computer is helping the network answer questions with {model}.</source>
      <extracomment>sentence.serving.model</extracomment>
      <translation>Danke: Dieser Computer hilft dem Netzwerk, Fragen mit {model} zu beantworten.</translation>
    </message>
    <message>
      <source>It connects through a relay, because the network cannot reach this computer directly (a home router usually blocks that).</source>
      <extracomment>sentence.relay</extracomment>
      <translation>Er verbindet sich über eine Weiterleitung, weil das Netzwerk ihn nicht direkt erreicht (meist blockiert das ein Heimrouter).</translation>
    </message>
    <message>
      <source>Contribution is paused; it carries on by itself.</source>
      <extracomment>sentence.paused</extracomment>
      <translation>Das Mithelfen ist pausiert; es geht von selbst weiter.</translation>
    </message>
    <message>
      <source>The memory MeshNet used was free again {seconds} seconds after the pause.</source>
      <extracomment>sentence.paused.released</extracomment>
      <translation>Der Speicher, den MeshNet belegt hatte, war {seconds} Sekunden nach der Pause wieder frei.</translation>
    </message>
    <message>
      <source>The network did not accept this computer</source>
      <extracomment>headline.refused</extracomment>
      <translation>Das Netzwerk hat diesen Computer nicht angenommen</translation>
    </message>
    <message>
      <source>Contribution stopped</source>
      <extracomment>headline.error</extracomment>
      <translation>Mithelfen angehalten</translation>
    </message>
    <message>
      <source>Handing the answers under way to other computers, then leaving the network…</source>
      <extracomment>sentence.draining</extracomment>
      <translation>Laufende Antworten werden an andere Computer übergeben, dann verlässt er das Netzwerk…</translation>
    </message>
    <message>
      <source>Loading the model onto this computer…</source>
      <extracomment>sentence.loading</extracomment>
      <translation>Das Modell wird auf diesen Computer geladen…</translation>
    </message>
    <message>
      <source>Checking that this computer gives correct answers…</source>
      <extracomment>sentence.probing</extracomment>
      <translation>Es wird geprüft, ob dieser Computer richtige Antworten gibt…</translation>
    </message>
    <message>
      <source>Checking the test result…</source>
      <extracomment>sentence.admitting</extracomment>
      <translation>Das Testergebnis wird geprüft…</translation>
    </message>
    <message>
      <source>Getting ready to answer questions…</source>
      <extracomment>sentence.starting</extracomment>
      <translation>Bereitet sich auf das Beantworten von Fragen vor…</translation>
    </message>
    <message>
      <source>Telling the network this computer is ready…</source>
      <extracomment>sentence.registering</extracomment>
      <translation>Teilt dem Netzwerk mit, dass dieser Computer bereit ist…</translation>
    </message>
    <message>
      <source>The connection to the network was lost; trying again…</source>
      <extracomment>sentence.reconnecting</extracomment>
      <translation>Die Verbindung zum Netzwerk ist abgebrochen; neuer Versuch…</translation>
    </message>
    <message>
      <source>{sentence} ({percent}%)</source>
      <extracomment>sentence.percent</extracomment>
      <translation>{sentence} ({percent} %)</translation>
    </message>
    <message>
      <source>This computer ran out of graphics memory. Check this computer again and choose to use more of its memory, or close other programs.</source>
      <extracomment>why.out-of-memory</extracomment>
      <translation>Diesem Computer ist der Grafikspeicher ausgegangen. Prüfen Sie ihn erneut und wählen Sie mehr Speicher, oder schließen Sie andere Programme.</translation>
    </message>
    <message>
      <source>This computer does not have enough free memory for this network's model right now. Close other programs, then click Retry.</source>
      <extracomment>why.too-little-memory</extracomment>
      <translation>Dieser Computer hat gerade nicht genug freien Speicher für das Modell dieses Netzwerks. Schließen Sie andere Programme und klicken Sie dann auf „Erneut versuchen“.</translation>
    </message>
    <message>
      <source>The model could not be loaded. Check this computer again; it fetches the model again if something is missing.</source>
      <extracomment>why.load-failed</extracomment>
      <translation>Das Modell konnte nicht geladen werden. Prüfen Sie diesen Computer erneut; fehlende Teile werden neu geholt.</translation>
    </message>
    <message>
      <source>This computer did not give correct answers in its test. Check this computer again; if it keeps failing, copy the details for whoever helps you.</source>
      <extracomment>why.test-failed</extracomment>
      <translation>Dieser Computer hat im Test keine richtigen Antworten gegeben. Prüfen Sie ihn erneut; wenn es wieder scheitert, kopieren Sie die Details für Ihre Hilfe.</translation>
    </message>
    <message>
      <source>The last test of this computer was too old. Click Retry: MeshNet tests it again by itself.</source>
      <extracomment>why.stale</extracomment>
      <translation>Der letzte Test dieses Computers war zu alt. Klicken Sie auf „Erneut versuchen“: MeshNet testet ihn von selbst neu.</translation>
    </message>
    <message>
      <source>This computer's last test was for a different setup. Click Retry to test it again.</source>
      <extracomment>why.mismatch</extracomment>
      <translation>Der letzte Test dieses Computers galt einer anderen Einrichtung. Klicken Sie auf „Erneut versuchen“, um ihn neu zu testen.</translation>
    </message>
    <message>
      <source>MeshNet could not reach the network. Check the internet connection, then click Retry.</source>
      <extracomment>why.network</extracomment>
      <translation>MeshNet hat das Netzwerk nicht erreicht. Prüfen Sie die Internetverbindung und klicken Sie dann auf „Erneut versuchen“.</translation>
    </message>
    <message>
      <source>MeshNet's helper program stopped unexpectedly. Click Retry; if it happens again, copy the details for whoever helps you.</source>
      <extracomment>why.crashed</extracomment>
      <translation>Das Hilfsprogramm von MeshNet wurde unerwartet beendet. Klicken Sie auf „Erneut versuchen“; passiert es wieder, kopieren Sie die Details für Ihre Hilfe.</translation>
    </message>
    <message>
      <source>This computer passed its test, but part of MeshNet would not start on it. Update or reinstall MeshNet, then check this computer again.</source>
      <extracomment>why.cannot-serve</extracomment>
      <translation>Dieser Computer hat seinen Test bestanden, aber ein Teil von MeshNet ließ sich darauf nicht starten. Aktualisieren oder installieren Sie MeshNet neu und prüfen Sie diesen Computer dann erneut.</translation>
    </message>
    <message>
      <source>MeshNet's helper program stopped twice in a row, so MeshNet will not start it again by itself. Copy the diagnostics for whoever helps you.</source>
      <extracomment>why.crashed-twice</extracomment>
      <translation>Das Hilfsprogramm von MeshNet ist zweimal hintereinander abgebrochen, daher startet MeshNet es nicht mehr von selbst. Kopieren Sie die Diagnose für die Person, die Ihnen hilft.</translation>
    </message>
    <message>
      <source>MeshNet could not start with the current settings. Open Settings and check them, then click Retry.</source>
      <extracomment>why.settings</extracomment>
      <translation>MeshNet konnte mit den aktuellen Einstellungen nicht starten. Öffnen Sie die Einstellungen, prüfen Sie sie und klicken Sie dann auf „Erneut versuchen“.</translation>
    </message>
    <message>
      <source>This computer has not joined a network yet. Open an invite to join one.</source>
      <extracomment>why.not-joined</extracomment>
      <translation>Dieser Computer ist noch keinem Netzwerk beigetreten. Öffnen Sie eine Einladung, um beizutreten.</translation>
    </message>
    <message>
      <source>Something went wrong. Click Retry; the details say more for whoever helps you.</source>
      <extracomment>why.other</extracomment>
      <translation>Etwas ist schiefgegangen. Klicken Sie auf „Erneut versuchen“; die Details sagen Ihrer Hilfe mehr.</translation>
    </message>
    <message>
      <source>The network did not accept this computer this time. Click Retry; the details say why, for whoever helps you.</source>
      <extracomment>why.refused</extracomment>
      <translation>Das Netzwerk hat diesen Computer diesmal nicht angenommen. Klicken Sie auf „Erneut versuchen“; die Details nennen den Grund für Ihre Hilfe.</translation>
    </message>
    <message>
      <source>Start contributing</source>
      <extracomment>button.start</extracomment>
      <translation>Mithelfen starten</translation>
    </message>
    <message>
      <source>Stop contributing</source>
      <extracomment>button.stop</extracomment>
      <translation>Mithelfen beenden</translation>
    </message>
    <message>
      <source>Retry</source>
      <extracomment>button.retry</extracomment>
      <translation>Erneut versuchen</translation>
    </message>
    <message>
      <source>Open settings</source>
      <extracomment>button.settings</extracomment>
      <translation>Einstellungen öffnen</translation>
    </message>
    <message>
      <source>Join another network</source>
      <extracomment>button.join, join.another</extracomment>
      <translation>Einem anderen Netzwerk beitreten</translation>
    </message>
    <message>
      <source>&amp;Details</source>
      <extracomment>button.details</extracomment>
      <translation>&amp;Details</translation>
    </message>
    <message>
      <source>The technical steps, the log and the usage chart, for the curious and for whoever helps you</source>
      <extracomment>button.details.tip</extracomment>
      <translation>Die technischen Schritte, das Protokoll und die Nutzungsgrafik, für Neugierige und für Ihre Hilfe</translation>
    </message>
    <message>
      <source>words written today</source>
      <extracomment>stat.today</extracomment>
      <translation>Wörter heute geschrieben</translation>
    </message>
    <message>
      <source>this week</source>
      <extracomment>stat.week, credit.week</extracomment>
      <translation>diese Woche</translation>
    </message>
    <message>
      <source>in all</source>
      <extracomment>stat.total, credit.total</extracomment>
      <translation>insgesamt</translation>
    </message>
    <message>
      <source>contributing for</source>
      <extracomment>stat.time</extracomment>
      <translation>hilft mit seit</translation>
    </message>
    <message>
      <source>Words of answers this computer helped write, as the model counts them (a long word can count as two)</source>
      <extracomment>stat.words.tip</extracomment>
      <translation>Wörter in Antworten, bei denen dieser Computer geholfen hat, so gezählt wie das Modell zählt (ein langes Wort kann doppelt zählen)</translation>
    </message>
    <message>
      <source>Your contribution</source>
      <extracomment>status.contribution</extracomment>
      <translation>Ihr Beitrag</translation>
    </message>
    <message>
      <source>Network: {name}</source>
      <extracomment>status.network</extracomment>
      <translation>Netzwerk: {name}</translation>
    </message>
    <message>
      <source>No network joined yet</source>
      <extracomment>status.network.none</extracomment>
      <translation>Noch keinem Netzwerk beigetreten</translation>
    </message>
    <message>
      <source>Your credit</source>
      <extracomment>credit.title</extracomment>
      <translation>Ihr Guthaben</translation>
    </message>
    <message>
      <source>credit today</source>
      <extracomment>credit.today</extracomment>
      <translation>Guthaben heute</translation>
    </message>
    <message>
      <source>rank on the leaderboard</source>
      <extracomment>credit.rank</extracomment>
      <translation>Platz in der Bestenliste</translation>
    </message>
    <message>
      <source>Credit the network gives this computer for the answers it helped with and the network checked</source>
      <extracomment>credit.tip</extracomment>
      <translation>Guthaben, das das Netzwerk diesem Computer für geprüfte Antworten gibt, bei denen er geholfen hat</translation>
    </message>
    <message>
      <source>Your credit shows here once this computer has joined a network and started contributing.</source>
      <extracomment>credit.waiting</extracomment>
      <translation>Ihr Guthaben erscheint hier, sobald dieser Computer einem Netzwerk beigetreten ist und mithilft.</translation>
    </message>
    <message>
      <source>The network took this computer's credit away because some of its answers were wrong. Check this computer again.</source>
      <extracomment>credit.forfeited</extracomment>
      <translation>Das Netzwerk hat diesem Computer das Guthaben entzogen, weil einige seiner Antworten falsch waren. Prüfen Sie diesen Computer erneut.</translation>
    </message>
    <message>
      <source>Credit: {today} today, {total} in all, rank {rank}</source>
      <extracomment>credit.line</extracomment>
      <translation>Guthaben: {today} heute, {total} insgesamt, Platz {rank}</translation>
    </message>
    <message>
      <source>Credit: taken away by the network</source>
      <extracomment>credit.line.forfeited</extracomment>
      <translation>Guthaben: vom Netzwerk entzogen</translation>
    </message>
    <message>
      <source>On the leaderboard as {name}, team {team}</source>
      <extracomment>credit.listed.both</extracomment>
      <translation>In der Bestenliste als {name}, Team {team}</translation>
    </message>
    <message>
      <source>On the leaderboard as {name}</source>
      <extracomment>credit.listed.name</extracomment>
      <translation>In der Bestenliste als {name}</translation>
    </message>
    <message>
      <source>On the leaderboard in team {team}</source>
      <extracomment>credit.listed.team</extracomment>
      <translation>In der Bestenliste im Team {team}</translation>
    </message>
    <message>
      <source>What this computer gives now</source>
      <extracomment>use.title</extracomment>
      <translation>Was dieser Computer gerade gibt</translation>
    </message>
    <message>
      <source>MeshNet uses nothing on this computer while it is not contributing.</source>
      <extracomment>use.none</extracomment>
      <translation>MeshNet nutzt nichts auf diesem Computer, solange er nicht mithilft.</translation>
    </message>
    <message>
      <source>MeshNet cannot measure how much of this computer it uses right now.</source>
      <extracomment>use.unknown</extracomment>
      <translation>MeshNet kann gerade nicht messen, wie viel es von diesem Computer nutzt.</translation>
    </message>
    <message>
      <source>Using {used} of {total} of graphics memory.</source>
      <extracomment>use.gpu</extracomment>
      <translation>Nutzt {used} von {total} Grafikspeicher.</translation>
    </message>
    <message>
      <source>Using {used} of {total} of graphics memory; the graphics card is {busy} busy.</source>
      <extracomment>use.gpu.busy</extracomment>
      <translation>Nutzt {used} von {total} Grafikspeicher; die Grafikkarte ist zu {busy} ausgelastet.</translation>
    </message>
    <message>
      <source>Using {ram} of memory and {cpu} of the processor.</source>
      <extracomment>use.cpu</extracomment>
      <translation>Nutzt {ram} Arbeitsspeicher und {cpu} des Prozessors.</translation>
    </message>
    <message>
      <source>Using {ram} of memory.</source>
      <extracomment>use.cpu.memory</extracomment>
      <translation>Nutzt {ram} Arbeitsspeicher.</translation>
    </message>
    <message>
      <source>Measured every few seconds from MeshNet's own programs; the rest of the computer is yours.</source>
      <extracomment>use.tip</extracomment>
      <translation>Alle paar Sekunden an den Programmen von MeshNet gemessen; der Rest des Computers gehört Ihnen.</translation>
    </message>
    <message>
      <source>What it earns</source>
      <extracomment>earn.title</extracomment>
      <translation>Was er verdient</translation>
    </message>
    <message>
      <source>This computer earned {today} credit today and {week} this week.</source>
      <extracomment>credit.earned</extracomment>
      <translation>Dieser Computer hat heute {today} Guthaben verdient, diese Woche {week}.</translation>
    </message>
    <message>
      <source>No credit yet: it comes once the network has checked this computer's answers.</source>
      <extracomment>credit.none-yet</extracomment>
      <translation>Noch kein Guthaben: Es kommt, sobald das Netzwerk die Antworten dieses Computers geprüft hat.</translation>
    </message>
    <message>
      <source>Credit puts your own questions first in line when the network is busy: {credit} credit is about {words} words of answers.</source>
      <extracomment>credit.buys</extracomment>
      <translation>Guthaben bringt Ihre eigenen Fragen nach vorn, wenn das Netzwerk ausgelastet ist: {credit} Guthaben reichen für etwa {words} Wörter an Antworten.</translation>
    </message>
    <message>
      <source>While it helps, this computer earns credit, which puts your own questions first in line when the network is busy.</source>
      <extracomment>credit.explain</extracomment>
      <translation>Während er mithilft, verdient dieser Computer Guthaben, das Ihre eigenen Fragen nach vorn bringt, wenn das Netzwerk ausgelastet ist.</translation>
    </message>
    <message>
      <source>The last 7 days</source>
      <extracomment>week.title</extracomment>
      <translation>Die letzten 7 Tage</translation>
    </message>
    <message>
      <source>Today</source>
      <extracomment>week.today</extracomment>
      <translation>Heute</translation>
    </message>
    <message>
      <source>nothing written</source>
      <extracomment>week.nothing</extracomment>
      <translation>nichts geschrieben</translation>
    </message>
    <message>
      <source>{words} words in {hours} hours</source>
      <extracomment>week.day</extracomment>
      <translation>{words} Wörter in {hours} Stunden</translation>
    </message>
    <message>
      <source>{words} words in 1 hour</source>
      <extracomment>week.day.one</extracomment>
      <translation>{words} Wörter in 1 Stunde</translation>
    </message>
    <message>
      <source>Nothing written this week yet.</source>
      <extracomment>week.empty</extracomment>
      <translation>Diese Woche wurde noch nichts geschrieben.</translation>
    </message>
    <message>
      <source>{words} words in {hours} hours this week.</source>
      <extracomment>week.total</extracomment>
      <translation>{words} Wörter in {hours} Stunden diese Woche.</translation>
    </message>
    <message>
      <source>Show your name on the leaderboard (optional)</source>
      <extracomment>leaderboard.title</extracomment>
      <translation>Ihren Namen in der Bestenliste zeigen (freiwillig)</translation>
    </message>
    <message>
      <source>The network keeps a list of how much each computer has helped. Leave both empty to be listed by number only.</source>
      <extracomment>leaderboard.intro</extracomment>
      <translation>Das Netzwerk führt eine Liste, wie viel jeder Computer geholfen hat. Lassen Sie beide Felder leer, um nur mit einer Nummer zu erscheinen.</translation>
    </message>
    <message>
      <source>&amp;Your name:</source>
      <extracomment>leaderboard.name</extracomment>
      <translation>&amp;Ihr Name:</translation>
    </message>
    <message>
      <source>Your name on the leaderboard</source>
      <extracomment>leaderboard.name.name</extracomment>
      <translation>Ihr Name in der Bestenliste</translation>
    </message>
    <message>
      <source>such as Ada</source>
      <extracomment>leaderboard.name.hint</extracomment>
      <translation>z. B. Ada</translation>
    </message>
    <message>
      <source>&amp;Team:</source>
      <extracomment>leaderboard.team</extracomment>
      <translation>&amp;Team:</translation>
    </message>
    <message>
      <source>Your team on the leaderboard</source>
      <extracomment>leaderboard.team.name</extracomment>
      <translation>Ihr Team in der Bestenliste</translation>
    </message>
    <message>
      <source>such as Riverside Makers</source>
      <extracomment>leaderboard.team.hint</extracomment>
      <translation>z. B. Riverside Makers</translation>
    </message>
    <message>
      <source>Your name and team are on the network's leaderboard.</source>
      <extracomment>leaderboard.done</extracomment>
      <translation>Ihr Name und Ihr Team stehen in der Bestenliste des Netzwerks.</translation>
    </message>
    <message>
      <source>Your name and team are no longer on the leaderboard.</source>
      <extracomment>leaderboard.cleared</extracomment>
      <translation>Ihr Name und Ihr Team stehen nicht mehr in der Bestenliste.</translation>
    </message>
    <message>
      <source>The network did not accept your name for the leaderboard. MeshNet asks again the next time this computer connects.</source>
      <extracomment>leaderboard.refused</extracomment>
      <translation>Das Netzwerk hat Ihren Namen für die Bestenliste nicht angenommen. MeshNet fragt erneut, wenn sich dieser Computer das nächste Mal verbindet.</translation>
    </message>
    <message>
      <source>MeshNet could not reach the network to put your name on the leaderboard. It tries again the next time this computer connects.</source>
      <extracomment>leaderboard.unreachable</extracomment>
      <translation>MeshNet konnte das Netzwerk nicht erreichen, um Ihren Namen in die Bestenliste zu setzen. Es versucht es erneut, wenn sich dieser Computer das nächste Mal verbindet.</translation>
    </message>
    <message>
      <source>Contributing again</source>
      <extracomment>notify.contributing.again</extracomment>
      <translation>Hilft wieder mit</translation>
    </message>
    <message>
      <source>This computer is helping the network answer questions.</source>
      <extracomment>notify.contributing.text</extracomment>
      <translation>Dieser Computer hilft dem Netzwerk, Fragen zu beantworten.</translation>
    </message>
    <message>
      <source>Contribution paused</source>
      <extracomment>notify.paused</extracomment>
      <translation>Mithelfen pausiert</translation>
    </message>
    <message>
      <source>Ready to answer</source>
      <extracomment>notify.ready, serves.ready</extracomment>
      <translation>Bereit zum Antworten</translation>
    </message>
    <message>
      <source>The network can now answer questions with {model}, with this computer's help.</source>
      <extracomment>notify.ready.text</extracomment>
      <translation>Das Netzwerk kann jetzt mit Hilfe dieses Computers Fragen mit {model} beantworten.</translation>
    </message>
    <message>
      <source>Join a network</source>
      <extracomment>join.title, join.one</extracomment>
      <translation>Einem Netzwerk beitreten</translation>
    </message>
    <message>
      <source>A network is a group of computers that answer questions together. Paste the invite you were sent to see who runs it before you join.</source>
      <extracomment>join.subtitle</extracomment>
      <translation>Ein Netzwerk ist eine Gruppe von Computern, die gemeinsam Fragen beantworten. Fügen Sie Ihre Einladung ein, um zu sehen, wer es betreibt.</translation>
    </message>
    <message>
      <source>&amp;Invite link:</source>
      <extracomment>join.link</extracomment>
      <translation>&amp;Einladungslink:</translation>
    </message>
    <message>
      <source>Invite link</source>
      <extracomment>join.link.name</extracomment>
      <translation>Einladungslink</translation>
    </message>
    <message>
      <source>Show network</source>
      <extracomment>join.show</extracomment>
      <translation>Netzwerk anzeigen</translation>
    </message>
    <message>
      <source>Show the network this invite is for</source>
      <extracomment>join.show.name</extracomment>
      <translation>Das Netzwerk dieser Einladung anzeigen</translation>
    </message>
    <message>
      <source>I run my own tracker (Advanced)</source>
      <extracomment>join.advanced</extracomment>
      <translation>Ich betreibe meinen eigenen Tracker (Fortgeschritten)</translation>
    </message>
    <message>
      <source>I run my own tracker</source>
      <extracomment>join.advanced.name</extracomment>
      <translation>Ich betreibe meinen eigenen Tracker</translation>
    </message>
    <message>
      <source>Network &amp;address:</source>
      <extracomment>join.address</extracomment>
      <translation>Netzwerk&amp;adresse:</translation>
    </message>
    <message>
      <source>Invite &amp;code:</source>
      <extracomment>join.code</extracomment>
      <translation>Einladungs&amp;code:</translation>
    </message>
    <message>
      <source>Join this network</source>
      <extracomment>join.join</extracomment>
      <translation>Diesem Netzwerk beitreten</translation>
    </message>
    <message>
      <source>This computer uses your own tracker at {url} (Settings, Advanced). Press Next to continue, or join a network.</source>
      <extracomment>join.own</extracomment>
      <translation>Dieser Computer nutzt Ihren eigenen Tracker unter {url} (Einstellungen, Erweitert). Klicken Sie auf „Weiter“ oder treten Sie einem Netzwerk bei.</translation>
    </message>
    <message>
      <source>This computer is part of {network}. Press Next to continue, or join another network.</source>
      <extracomment>join.part-of</extracomment>
      <translation>Dieser Computer gehört zu {network}. Klicken Sie auf „Weiter“ oder treten Sie einem anderen Netzwerk bei.</translation>
    </message>
    <message>
      <source>Run by {operator}</source>
      <extracomment>join.run-by</extracomment>
      <translation>Betrieben von {operator}</translation>
    </message>
    <message>
      <source>The organiser gave no name.</source>
      <extracomment>join.no-operator</extracomment>
      <translation>Der Betreiber hat keinen Namen angegeben.</translation>
    </message>
    <message>
      <source>Answers questions with: {models}</source>
      <extracomment>join.serves</extracomment>
      <translation>Beantwortet Fragen mit: {models}</translation>
    </message>
    <message>
      <source>Joining lets this computer help answer questions for this network while you are not using it. You can pause or leave at any time.</source>
      <extracomment>join.explain</extracomment>
      <translation>Mit dem Beitritt hilft dieser Computer diesem Netzwerk beim Beantworten von Fragen, während Sie ihn nicht benutzen. Sie können jederzeit pausieren oder austreten.</translation>
    </message>
    <message>
      <source>Type the network's address and the invite code.</source>
      <extracomment>join.type-both</extracomment>
      <translation>Geben Sie die Adresse des Netzwerks und den Einladungscode ein.</translation>
    </message>
    <message>
      <source>Paste the invite link you were sent.</source>
      <extracomment>join.paste</extracomment>
      <translation>Fügen Sie den Einladungslink ein, den Sie bekommen haben.</translation>
    </message>
    <message>
      <source>Looking up the network…</source>
      <extracomment>join.looking</extracomment>
      <translation>Das Netzwerk wird nachgeschlagen…</translation>
    </message>
    <message>
      <source>Joining {network}…</source>
      <extracomment>join.joining</extracomment>
      <translation>Tritt {network} bei…</translation>
    </message>
    <message>
      <source>the network</source>
      <extracomment>join.the-network</extracomment>
      <translation>dem Netzwerk</translation>
    </message>
    <message>
      <source>You joined {network}. Press Next to check this computer.</source>
      <extracomment>join.joined</extracomment>
      <translation>Sie sind {network} beigetreten. Klicken Sie auf „Weiter“, um diesen Computer zu prüfen.</translation>
    </message>
    <message>
      <source>{name} (run by {operator})</source>
      <extracomment>join.network-by</extracomment>
      <translation>{name} (betrieben von {operator})</translation>
    </message>
    <message>
      <source>MeshNet — check this computer</source>
      <extracomment>wizard.title</extracomment>
      <translation>MeshNet — diesen Computer prüfen</translation>
    </message>
    <message>
      <source>Finish</source>
      <extracomment>wizard.finish</extracomment>
      <translation>Fertigstellen</translation>
    </message>
    <message>
      <source>Check this computer</source>
      <extracomment>welcome.title</extracomment>
      <translation>Diesen Computer prüfen</translation>
    </message>
    <message>
      <source>MeshNet lets this computer help answer questions for the network while you are not using it.</source>
      <extracomment>welcome.one</extracomment>
      <translation>Mit MeshNet hilft dieser Computer dem Netzwerk beim Beantworten von Fragen, während Sie ihn nicht benutzen.</translation>
    </message>
    <message>
      <source>This check looks at your computer, gets the model if it is not here yet, and runs a real test. It takes a few minutes and you can stop it at any time.</source>
      <extracomment>welcome.two</extracomment>
      <translation>Diese Prüfung sieht sich Ihren Computer an, holt das Modell, falls es noch fehlt, und macht einen echten Test. Das dauert ein paar Minuten, und Sie können jederzeit abbrechen.</translation>
    </message>
    <message>
      <source>Your computer</source>
      <extracomment>hardware.title</extracomment>
      <translation>Ihr Computer</translation>
    </message>
    <message>
      <source>Cancel check</source>
      <extracomment>hardware.cancel</extracomment>
      <translation>Prüfung abbrechen</translation>
    </message>
    <message>
      <source>Looking at this computer…</source>
      <extracomment>hardware.looking</extracomment>
      <translation>Dieser Computer wird angesehen…</translation>
    </message>
    <message>
      <source>&amp;Graphics card:</source>
      <extracomment>hardware.device</extracomment>
      <translation>&amp;Grafikkarte:</translation>
    </message>
    <message>
      <source>&amp;Memory:</source>
      <extracomment>hardware.memory</extracomment>
      <translation>&amp;Arbeitsspeicher:</translation>
    </message>
    <message>
      <source>&amp;Free disk:</source>
      <extracomment>hardware.disk</extracomment>
      <translation>&amp;Freier Speicherplatz:</translation>
    </message>
    <message>
      <source>Mo&amp;del:</source>
      <extracomment>hardware.model</extracomment>
      <translation>Mo&amp;dell:</translation>
    </message>
    <message>
      <source>{name}, graphics card: {free} free of {total}</source>
      <extracomment>hardware.gpu</extracomment>
      <translation>{name}, Grafikkarte: {free} frei von {total}</translation>
    </message>
    <message>
      <source>{name}, processor (no graphics card found): {free} free of {total}</source>
      <extracomment>hardware.cpu</extracomment>
      <translation>{name}, Prozessor (keine Grafikkarte gefunden): {free} frei von {total}</translation>
    </message>
    <message>
      <source>{free} available of {total}</source>
      <extracomment>hardware.ram</extracomment>
      <translation>{free} verfügbar von {total}</translation>
    </message>
    <message>
      <source>{free} free for models</source>
      <extracomment>hardware.disk.free</extracomment>
      <translation>{free} frei für Modelle</translation>
    </message>
    <message>
      <source>{model}, already on this computer</source>
      <extracomment>hardware.model.here</extracomment>
      <translation>{model}, schon auf diesem Computer</translation>
    </message>
    <message>
      <source>{model}, fetched in the next step</source>
      <extracomment>hardware.model.missing</extracomment>
      <translation>{model}, wird im nächsten Schritt geholt</translation>
    </message>
    <message>
      <source>This is what MeshNet found. Next: choose how much of this computer to use.</source>
      <extracomment>hardware.done</extracomment>
      <translation>Das hat MeshNet gefunden. Als Nächstes: Wählen Sie, wie viel dieses Computers genutzt wird.</translation>
    </message>
    <message>
      <source>The check of this computer did not finish. Try again, or open Settings.</source>
      <extracomment>hardware.failed</extracomment>
      <translation>Die Prüfung dieses Computers wurde nicht fertig. Versuchen Sie es erneut oder öffnen Sie die Einstellungen.</translation>
    </message>
    <message>
      <source>How much of this computer to use</source>
      <extracomment>memory.title</extracomment>
      <translation>Wie viel dieses Computers genutzt wird</translation>
    </message>
    <message>
      <source>MeshNet uses only the share you choose, so there is room left for games and other programs. The network decides which part of the model this computer holds.</source>
      <extracomment>memory.intro</extracomment>
      <translation>MeshNet nutzt nur den Anteil, den Sie wählen, damit Platz für Spiele und andere Programme bleibt. Das Netzwerk entscheidet, welchen Teil des Modells dieser Computer übernimmt.</translation>
    </message>
    <message>
      <source>Use up to:</source>
      <extracomment>memory.gpu</extracomment>
      <translation>Höchstens nutzen:</translation>
    </message>
    <message>
      <source>&amp;A little of my graphics memory (about {size})</source>
      <extracomment>memory.little</extracomment>
      <translation>&amp;Ein wenig von meinem Grafikspeicher (etwa {size})</translation>
    </message>
    <message>
      <source>&amp;Half of my graphics memory (about {size}) — room for games</source>
      <extracomment>memory.half</extracomment>
      <translation>Die &amp;Hälfte meines Grafikspeichers (etwa {size}) — Platz für Spiele</translation>
    </message>
    <message>
      <source>M&amp;ost of my graphics memory (about {size})</source>
      <extracomment>memory.most</extracomment>
      <translation>Den &amp;Großteil meines Grafikspeichers (etwa {size})</translation>
    </message>
    <message>
      <source>&amp;A little of my memory (about {size})</source>
      <extracomment>memory.little.cpu</extracomment>
      <translation>&amp;Ein wenig von meinem Arbeitsspeicher (etwa {size})</translation>
    </message>
    <message>
      <source>&amp;Half of my memory (about {size})</source>
      <extracomment>memory.half.cpu</extracomment>
      <translation>Die &amp;Hälfte meines Arbeitsspeichers (etwa {size})</translation>
    </message>
    <message>
      <source>M&amp;ost of my memory (about {size})</source>
      <extracomment>memory.most.cpu</extracomment>
      <translation>Den &amp;Großteil meines Arbeitsspeichers (etwa {size})</translation>
    </message>
    <message>
      <source>That is too little memory for this network's model; choose more.</source>
      <extracomment>memory.too-little</extracomment>
      <translation>Das ist zu wenig Speicher für das Modell dieses Netzwerks; wählen Sie mehr.</translation>
    </message>
    <message>
      <source>With this choice this computer can hold the whole model.</source>
      <extracomment>memory.holds.all</extracomment>
      <translation>Mit dieser Wahl kann dieser Computer das ganze Modell übernehmen.</translation>
    </message>
    <message>
      <source>With this choice this computer holds part of the model; other computers hold the rest.</source>
      <extracomment>memory.holds.part</extracomment>
      <translation>Mit dieser Wahl übernimmt dieser Computer einen Teil des Modells; andere Computer übernehmen den Rest.</translation>
    </message>
    <message>
      <source>Asking the network which part it needs most…</source>
      <extracomment>memory.asking</extracomment>
      <translation>Das Netzwerk wird gefragt, welchen Teil es am dringendsten braucht…</translation>
    </message>
    <message>
      <source>The network chose the part it needs most.</source>
      <extracomment>memory.network</extracomment>
      <translation>Das Netzwerk hat den Teil gewählt, den es am dringendsten braucht.</translation>
    </message>
    <message>
      <source>The network did not answer, so MeshNet chose a part that fits this computer.</source>
      <extracomment>memory.network.failed</extracomment>
      <translation>Das Netzwerk hat nicht geantwortet, also hat MeshNet einen Teil gewählt, der zu diesem Computer passt.</translation>
    </message>
    <message>
      <source>Cancel</source>
      <extracomment>child.cancel</extracomment>
      <translation>Abbrechen</translation>
    </message>
    <message>
      <source>&amp;Try again</source>
      <extracomment>child.retry</extracomment>
      <translation>&amp;Erneut versuchen</translation>
    </message>
    <message>
      <source>Stopping…</source>
      <extracomment>child.stopping</extracomment>
      <translation>Wird angehalten…</translation>
    </message>
    <message>
      <source>Stopped. Nothing was changed on this computer.</source>
      <extracomment>child.stopped</extracomment>
      <translation>Angehalten. An diesem Computer wurde nichts verändert.</translation>
    </message>
    <message>
      <source>Getting the model</source>
      <extracomment>import.title</extracomment>
      <translation>Das Modell wird geholt</translation>
    </message>
    <message>
      <source>Cancel download</source>
      <extracomment>import.cancel</extracomment>
      <translation>Download abbrechen</translation>
    </message>
    <message>
      <source>Preparing the model for this computer…</source>
      <extracomment>import.preparing, event.progress.import</extracomment>
      <translation>Das Modell wird für diesen Computer vorbereitet…</translation>
    </message>
    <message>
      <source>The model could not be prepared. Check the free disk space, then try again.</source>
      <extracomment>import.failed</extracomment>
      <translation>Das Modell konnte nicht vorbereitet werden. Prüfen Sie den freien Speicherplatz und versuchen Sie es erneut.</translation>
    </message>
    <message>
      <source>The model is ready on this computer. Next: the test.</source>
      <extracomment>import.ready</extracomment>
      <translation>Das Modell ist auf diesem Computer bereit. Als Nächstes: der Test.</translation>
    </message>
    <message>
      <source>Cancelled. Nothing was saved; you can try again whenever you like.</source>
      <extracomment>import.cancelled</extracomment>
      <translation>Abgebrochen. Nichts wurde gespeichert; Sie können es jederzeit erneut versuchen.</translation>
    </message>
    <message>
      <source>Cancel test</source>
      <extracomment>test.cancel</extracomment>
      <translation>Test abbrechen</translation>
    </message>
    <message>
      <source>Loading the model and running a real test with it…</source>
      <extracomment>test.running</extracomment>
      <translation>Das Modell wird geladen und echt getestet…</translation>
    </message>
    <message>
      <source>The test has finished.</source>
      <extracomment>test.finished</extracomment>
      <translation>Der Test ist fertig.</translation>
    </message>
    <message>
      <source>Test cancelled. Nothing was saved; try again when you are ready.</source>
      <extracomment>test.cancelled</extracomment>
      <translation>Test abgebrochen. Nichts wurde gespeichert; versuchen Sie es erneut, wenn Sie bereit sind.</translation>
    </message>
    <message>
      <source>Test result</source>
      <extracomment>result.title</extracomment>
      <translation>Testergebnis</translation>
    </message>
    <message>
      <source>Passed: this computer is ready to contribute.</source>
      <extracomment>result.passed</extracomment>
      <translation>Bestanden: Dieser Computer kann mithelfen.</translation>
    </message>
    <message>
      <source>It answered at about {speed} words per second.</source>
      <extracomment>result.speed</extracomment>
      <translation>Er hat mit etwa {speed} Wörtern pro Sekunde geantwortet.</translation>
    </message>
    <message>
      <source>It gave correct answers.</source>
      <extracomment>result.speed.none</extracomment>
      <translation>Er hat richtige Antworten gegeben.</translation>
    </message>
    <message>
      <source>Finish saves this and, with the box ticked, starts contributing.</source>
      <extracomment>result.finish</extracomment>
      <translation>„Fertigstellen“ speichert das und startet, wenn das Häkchen gesetzt ist, das Mithelfen.</translation>
    </message>
    <message>
      <source>Contribute is already on; it uses this the next time it starts.</source>
      <extracomment>result.running</extracomment>
      <translation>Mithelfen ist schon an; beim nächsten Start wird dies genutzt.</translation>
    </message>
    <message>
      <source>&amp;Start contributing now</source>
      <extracomment>result.start</extracomment>
      <translation>Jetzt mithelfen &amp;starten</translation>
    </message>
    <message>
      <source>The test did not pass.</source>
      <extracomment>result.failed</extracomment>
      <translation>Der Test wurde nicht bestanden.</translation>
    </message>
    <message>
      <source>The test stopped without saying why.</source>
      <extracomment>result.failed.why</extracomment>
      <translation>Der Test wurde beendet, ohne einen Grund zu nennen.</translation>
    </message>
    <message>
      <source>What to do: go back and choose to use more of this computer's memory, or close other programs, then test again. Nothing was changed.</source>
      <extracomment>result.failed.advice</extracomment>
      <translation>Was tun: Gehen Sie zurück und wählen Sie mehr Speicher dieses Computers, oder schließen Sie andere Programme, und testen Sie erneut. Nichts wurde verändert.</translation>
    </message>
    <message>
      <source>Choose how much &amp;memory to use</source>
      <extracomment>result.back</extracomment>
      <translation>&amp;Speichernutzung wählen</translation>
    </message>
    <message>
      <source>Show &amp;details</source>
      <extracomment>result.details</extracomment>
      <translation>&amp;Details zeigen</translation>
    </message>
    <message>
      <source>Hide &amp;details</source>
      <extracomment>result.details.hide</extracomment>
      <translation>&amp;Details verbergen</translation>
    </message>
    <message>
      <source>The models this network answers questions with, and how many computers help with each.</source>
      <extracomment>serves.intro</extracomment>
      <translation>Die Modelle, mit denen dieses Netzwerk Fragen beantwortet, und wie viele Computer bei jedem helfen.</translation>
    </message>
    <message>
      <source>Not ready yet: it needs more computers</source>
      <extracomment>serves.not-ready</extracomment>
      <translation>Noch nicht bereit: es braucht mehr Computer</translation>
    </message>
    <message>
      <source>{count} computers help</source>
      <extracomment>serves.computers</extracomment>
      <translation>{count} Computer helfen</translation>
    </message>
    <message>
      <source>1 computer helps</source>
      <extracomment>serves.computer</extracomment>
      <translation>1 Computer hilft</translation>
    </message>
    <message>
      <source>This network has not said what it serves yet.</source>
      <extracomment>serves.none</extracomment>
      <translation>Dieses Netzwerk hat noch nicht gesagt, was es anbietet.</translation>
    </message>
    <message>
      <source>MeshNet could not ask the network: {sentence}</source>
      <extracomment>serves.failed</extracomment>
      <translation>MeshNet konnte das Netzwerk nicht fragen: {sentence}</translation>
    </message>
    <message>
      <source>Asking the network…</source>
      <extracomment>serves.loading</extracomment>
      <translation>Das Netzwerk wird gefragt…</translation>
    </message>
    <message>
      <source>&amp;Refresh</source>
      <extracomment>serves.refresh</extracomment>
      <translation>&amp;Aktualisieren</translation>
    </message>
    <message>
      <source>&amp;Close</source>
      <extracomment>serves.close</extracomment>
      <translation>&amp;Schließen</translation>
    </message>
    <message>
      <source>Contributing: no pause rule applies</source>
      <extracomment>pause.none</extracomment>
      <translation>Beitragen: keine Pausenregel greift</translation>
    </message>
    <message>
      <source>Paused while {name} runs</source>
      <extracomment>pause.program</extracomment>
      <translation>Pausiert, solange {name} läuft</translation>
    </message>
    <message>
      <source>Paused while {names} and {last} run</source>
      <extracomment>pause.programs</extracomment>
      <translation>Pausiert, solange {names} und {last} laufen</translation>
    </message>
    <message>
      <source>Paused: the graphics card is busy with another program</source>
      <extracomment>pause.gpu-busy</extracomment>
      <translation>Pausiert: Die Grafikkarte ist mit einem anderen Programm beschäftigt</translation>
    </message>
    <message>
      <source>Paused: running on battery</source>
      <extracomment>pause.battery</extracomment>
      <translation>Pausiert: Betrieb mit Akku</translation>
    </message>
    <message>
      <source>Paused: graphics card at {temp} °C (limit {limit} °C)</source>
      <extracomment>pause.gpu-hot</extracomment>
      <translation>Pausiert: Grafikkarte bei {temp} °C (Grenze {limit} °C)</translation>
    </message>
    <message>
      <source>Waiting until this computer has been idle for {minutes} minutes</source>
      <extracomment>pause.idle</extracomment>
      <translation>Wartet, bis dieser Computer {minutes} Minuten unbenutzt war</translation>
    </message>
    <message>
      <source>Waiting until this computer has been idle for 1 minute</source>
      <extracomment>pause.idle.one</extracomment>
      <translation>Wartet, bis dieser Computer 1 Minute unbenutzt war</translation>
    </message>
    <message>
      <source>Resuming soon: no pause rule applies any more</source>
      <extracomment>pause.resuming</extracomment>
      <translation>Geht gleich weiter: keine Pausenregel greift mehr</translation>
    </message>
    <message>
      <source>Paused at your request until {until}.</source>
      <extracomment>pause.hour</extracomment>
      <translation>Auf Ihren Wunsch pausiert bis {until}.</translation>
    </message>
    <message>
      <source>Paused at your request until you resume.</source>
      <extracomment>pause.until-resume</extracomment>
      <translation>Auf Ihren Wunsch pausiert, bis Sie fortsetzen.</translation>
    </message>
    <message>
      <source>Paused at your request until this computer restarts.</source>
      <extracomment>pause.until-restart</extracomment>
      <translation>Auf Ihren Wunsch pausiert, bis dieser Computer neu startet.</translation>
    </message>
    <message>
      <source>This computer is not part of a network, so there is nothing to leave.</source>
      <extracomment>leave.none</extracomment>
      <translation>Dieser Computer gehört zu keinem Netzwerk, es gibt also nichts zu verlassen.</translation>
    </message>
    <message>
      <source>Leave {name}? This computer stops contributing to it and forgets its invite.</source>
      <extracomment>leave.confirm</extracomment>
      <translation>{name} verlassen? Dieser Computer hört auf, dazu beizutragen, und vergisst die Einladung.</translation>
    </message>
    <message>
      <source>You left {name}. Kept on this computer: its key, your settings and the record of what it contributed. Join a network again with an invite.</source>
      <extracomment>leave.done</extracomment>
      <translation>Sie haben {name} verlassen. Auf diesem Computer bleiben: sein Schlüssel, Ihre Einstellungen und die Aufzeichnung seines Beitrags. Mit einer Einladung können Sie wieder einem Netzwerk beitreten.</translation>
    </message>
    <message>
      <source>{count} s</source>
      <extracomment>duration.seconds</extracomment>
      <translation>{count} s</translation>
    </message>
    <message>
      <source>{count} min</source>
      <extracomment>duration.minutes</extracomment>
      <translation>{count} min</translation>
    </message>
    <message>
      <source>{hours} h {minutes} min</source>
      <extracomment>duration.hours</extracomment>
      <translation>{hours} h {minutes} min</translation>
    </message>
    <message>
      <source>{days} d {hours} h</source>
      <extracomment>duration.days</extracomment>
      <translation>{days} T {hours} h</translation>
    </message>
    <message>
      <source>Something went wrong inside MeshNet. Your contribution settings are safe; try again, and if it keeps happening use {copy} in the Status window.</source>
      <extracomment>apology</extracomment>
      <translation>In MeshNet ist etwas schiefgegangen. Ihre Einstellungen zum Mithelfen sind sicher; versuchen Sie es erneut, und wenn es wieder passiert, nutzen Sie „{copy}“ im Status-Fenster.</translation>
    </message>
    <message>
      <source>The details are in {path}.</source>
      <extracomment>apology.where</extracomment>
      <translation>Die Einzelheiten stehen in {path}.</translation>
    </message>
    <message>
      <source>Your settings need a change before contributing: {sentence}</source>
      <extracomment>settings.need-change</extracomment>
      <translation>Ihre Einstellungen brauchen eine Änderung, bevor Sie mithelfen können: {sentence}</translation>
    </message>
    <message>
      <source>The test could not run.</source>
      <extracomment>test.could-not-run</extracomment>
      <translation>Der Test konnte nicht laufen.</translation>
    </message>
    <message>
      <source>This invite has already been used as many times as it allows. Ask the person who invited you for a new one.</source>
      <extracomment>join.refused.invite-used-up</extracomment>
      <translation>Diese Einladung wurde schon so oft benutzt, wie sie erlaubt. Bitten Sie die Person, die Sie eingeladen hat, um eine neue.</translation>
    </message>
    <message>
      <source>This invite has expired. Ask the person who invited you for a new one.</source>
      <extracomment>join.refused.invite-expired</extracomment>
      <translation>Diese Einladung ist abgelaufen. Bitten Sie die Person, die Sie eingeladen hat, um eine neue.</translation>
    </message>
    <message>
      <source>This invite was withdrawn by the network's organiser. Ask them for a new one.</source>
      <extracomment>join.refused.invite-revoked</extracomment>
      <translation>Der Organisator des Netzwerks hat diese Einladung zurückgezogen. Bitten Sie ihn um eine neue.</translation>
    </message>
    <message>
      <source>This network does not know that invite. Check that you copied all of it, or ask for a new one.</source>
      <extracomment>join.refused.invite-unknown</extracomment>
      <translation>Dieses Netzwerk kennt diese Einladung nicht. Prüfen Sie, ob Sie sie vollständig kopiert haben, oder bitten Sie um eine neue.</translation>
    </message>
    <message>
      <source>This link does not lead to the network it was made for, so nothing was sent. Ask the person who invited you for a fresh link.</source>
      <extracomment>join.refused.tracker-key-mismatch</extracomment>
      <translation>Dieser Link führt nicht zu dem Netzwerk, für das er gemacht wurde, daher wurde nichts gesendet. Bitten Sie die Person, die Sie eingeladen hat, um einen neuen Link.</translation>
    </message>
    <message>
      <source>The network's answer could not be trusted, so nothing was saved. Try again later, or ask for a fresh link.</source>
      <extracomment>join.refused.bad-tracker-answer</extracomment>
      <translation>Der Antwort des Netzwerks war nicht zu trauen, daher wurde nichts gespeichert. Versuchen Sie es später erneut oder bitten Sie um einen neuen Link.</translation>
    </message>
    <message>
      <source>That is not a whole invite link. Copy all of it: it starts with meshnet://join?</source>
      <extracomment>join.refused.bad-invite-link</extracomment>
      <translation>Das ist kein vollständiger Einladungslink. Kopieren Sie ihn ganz: Er beginnt mit meshnet://join?</translation>
    </message>
    <message>
      <source>Type the network's address as its organiser gave it, starting with https:// or http://.</source>
      <extracomment>join.refused.bad-network-address</extracomment>
      <translation>Geben Sie die Adresse des Netzwerks so ein, wie der Organisator sie Ihnen gegeben hat, beginnend mit https:// oder http://.</translation>
    </message>
    <message>
      <source>Type the invite code as you were given it (letters, digits and dashes).</source>
      <extracomment>join.refused.bad-invite-code</extracomment>
      <translation>Geben Sie den Einladungscode so ein, wie Sie ihn bekommen haben (Buchstaben, Ziffern und Bindestriche).</translation>
    </message>
    <message>
      <source>The network could not be reached. Check this computer is online and try again.</source>
      <extracomment>join.refused.tracker-unreachable</extracomment>
      <translation>Das Netzwerk war nicht erreichbar. Prüfen Sie, ob dieser Computer online ist, und versuchen Sie es erneut.</translation>
    </message>
    <message>
      <source>This computer has not joined a network yet. Paste the invite you were sent on the Join a network page (Check this computer…), then press Contribute again.</source>
      <extracomment>join.none-yet</extracomment>
      <translation>Dieser Computer ist noch keinem Netzwerk beigetreten. Fügen Sie die Einladung, die Sie bekommen haben, auf der Seite „Einem Netzwerk beitreten“ ein (Diesen Computer prüfen…) und klicken Sie dann erneut auf „Mithelfen“.</translation>
    </message>
    <message>
      <source>{size} GB</source>
      <extracomment>size.gb</extracomment>
      <translation>{size} GB</translation>
    </message>
    <message>
      <source>unknown</source>
      <extracomment>size.unknown</extracomment>
      <translation>unbekannt</translation>
    </message>
    <message>
      <source>{value}%</source>
      <extracomment>percent</extracomment>
      <translation>{value} %</translation>
    </message>
    <message>
      <source>Downloading the model…</source>
      <extracomment>event.progress.fetch</extracomment>
      <translation>Das Modell wird heruntergeladen…</translation>
    </message>
    <message>
      <source>Loading the model…</source>
      <extracomment>event.progress.load</extracomment>
      <translation>Das Modell wird geladen…</translation>
    </message>
    <message>
      <source>Testing this computer…</source>
      <extracomment>event.progress.probe</extracomment>
      <translation>Dieser Computer wird getestet…</translation>
    </message>
    <message>
      <source>{sentence} {percent}</source>
      <extracomment>event.progress.count</extracomment>
      <translation>{sentence} {percent}</translation>
    </message>
    <message>
      <source>Advanced</source>
      <extracomment>settings.tab.advanced</extracomment>
      <translation>Erweitert</translation>
    </message>
    <message>
      <source>MeshNet found this graphics card when it checked this computer.</source>
      <extracomment>settings.card.found</extracomment>
      <translation>MeshNet hat diese Grafikkarte bei der Prüfung dieses Computers gefunden.</translation>
    </message>
    <message>
      <source>Check this computer to list its graphics card here.</source>
      <extracomment>settings.card.none</extracomment>
      <translation>Prüfen Sie diesen Computer, damit seine Grafikkarte hier erscheint.</translation>
    </message>
    <message>
      <source>Chosen on the Advanced page: {device}.</source>
      <extracomment>settings.card.advanced</extracomment>
      <translation>Auf der Seite Erweitert gewählt: {device}.</translation>
    </message>
    <message>
      <source> GB</source>
      <extracomment>settings.memory.unit</extracomment>
      <translation> GB</translation>
    </message>
    <message>
      <source>The most memory MeshNet may use; the rest stays free for games and other programs.</source>
      <extracomment>settings.memory.hint</extracomment>
      <translation>So viel Speicher darf MeshNet höchstens nutzen; der Rest bleibt frei für Spiele und andere Programme.</translation>
    </message>
    <message>
      <source>{size} is too little memory for MeshNet: choose at least {least}, or No limit.</source>
      <extracomment>problem.memory.gb</extracomment>
      <translation>{size} ist zu wenig Speicher für MeshNet: Wählen Sie mindestens {least} oder Keine Grenze.</translation>
    </message>
    <message>
      <source>← Back</source>
      <extracomment>details.back</extracomment>
      <translation>← Zurück</translation>
    </message>
    <message>
      <source>Back to the status</source>
      <extracomment>details.back.name</extracomment>
      <translation>Zurück zum Status</translation>
    </message>
    <message>
      <source>Admission, step by step</source>
      <extracomment>details.title</extracomment>
      <translation>Zulassung, Schritt für Schritt</translation>
    </message>
    <message>
      <source>tokens served</source>
      <extracomment>details.tokens</extracomment>
      <translation>ausgelieferte Tokens</translation>
    </message>
    <message>
      <source>open sessions</source>
      <extracomment>details.sessions</extracomment>
      <translation>offene Sitzungen</translation>
    </message>
    <message>
      <source>Tokens served, last 7 days</source>
      <extracomment>details.chart</extracomment>
      <translation>Ausgelieferte Tokens, letzte 7 Tage</translation>
    </message>
    <message>
      <source>Tokens served per hour over the last week</source>
      <extracomment>details.chart.name</extracomment>
      <translation>Ausgelieferte Tokens pro Stunde in der letzten Woche</translation>
    </message>
    <message>
      <source>{total} tokens served in the last 7 days; busiest hour {when} ({best} tokens).</source>
      <extracomment>details.chart.summary</extracomment>
      <translation>{total} Tokens in den letzten 7 Tagen ausgeliefert; meiste Arbeit {when} ({best} Tokens).</translation>
    </message>
    <message>
      <source>No tokens served in the last 7 days yet.</source>
      <extracomment>details.chart.nothing</extracomment>
      <translation>In den letzten 7 Tagen noch keine Tokens ausgeliefert.</translation>
    </message>
    <message>
      <source>This chart fills in while this computer contributes.</source>
      <extracomment>details.chart.fills</extracomment>
      <translation>Dieses Diagramm füllt sich, während dieser Computer mithilft.</translation>
    </message>
    <message>
      <source>Node log</source>
      <extracomment>details.log</extracomment>
      <translation>Protokoll des Knotens</translation>
    </message>
    <message>
      <source>The node's messages appear here while it runs.</source>
      <extracomment>details.log.empty</extracomment>
      <translation>Die Meldungen des Knotens erscheinen hier, während er läuft.</translation>
    </message>
    <message>
      <source>This computer has no keyring, so MeshNet keeps its key and its batch-job sign-in in files only you can read, in {folder}.</source>
      <extracomment>details.key-file.no-keyring</extracomment>
      <translation>Dieser Computer hat keinen Schlüsselbund, daher bewahrt MeshNet seinen Schlüssel und die Anmeldung für Stapelaufträge in Dateien auf, die nur Sie lesen können, in {folder}.</translation>
    </message>
    <message>
      <source>MeshNet keeps this computer's key in a file only you can read: {path}.</source>
      <extracomment>details.key-file</extracomment>
      <translation>MeshNet bewahrt den Schlüssel dieses Computers in einer Datei auf, die nur Sie lesen können: {path}.</translation>
    </message>
    <message>
      <source>Copy diagnostics</source>
      <extracomment>details.copy</extracomment>
      <translation>Diagnose kopieren</translation>
    </message>
    <message>
      <source>Copy the status, the gates, the report and the last log lines, to paste into a message to someone helping you</source>
      <extracomment>details.copy.tip</extracomment>
      <translation>Status, Prüfschritte, Bericht und die letzten Protokollzeilen kopieren, um sie in eine Nachricht an jemanden einzufügen, der Ihnen hilft</translation>
    </message>
    <message>
      <source>Diagnostics copied: paste them into your message.</source>
      <extracomment>details.copied</extracomment>
      <translation>Diagnose kopiert: Fügen Sie sie in Ihre Nachricht ein.</translation>
    </message>
    <message>
      <source>Reason code, for whoever helps you</source>
      <extracomment>details.reason.tip</extracomment>
      <translation>Grundcode, für die Person, die Ihnen hilft</translation>
    </message>
    <message>
      <source>Passed</source>
      <extracomment>gate-state.passed</extracomment>
      <translation>Bestanden</translation>
    </message>
    <message>
      <source>Failed</source>
      <extracomment>gate-state.failed</extracomment>
      <translation>Fehlgeschlagen</translation>
    </message>
    <message>
      <source>In progress</source>
      <extracomment>gate-state.pending</extracomment>
      <translation>Läuft</translation>
    </message>
    <message>
      <source>For your information</source>
      <extracomment>gate-state.info</extracomment>
      <translation>Zur Information</translation>
    </message>
    <message>
      <source>Not reached yet</source>
      <extracomment>gate-state.waiting</extracomment>
      <translation>Noch nicht erreicht</translation>
    </message>
    <message>
      <source>Identity</source>
      <extracomment>gate.identity</extracomment>
      <translation>Identität</translation>
    </message>
    <message>
      <source>Layers chosen</source>
      <extracomment>gate.placement</extracomment>
      <translation>Schichten gewählt</translation>
    </message>
    <message>
      <source>Capability report</source>
      <extracomment>gate.capability</extracomment>
      <translation>Leistungsbericht</translation>
    </message>
    <message>
      <source>Admission</source>
      <extracomment>gate.admission</extracomment>
      <translation>Zulassung</translation>
    </message>
    <message>
      <source>Data plane</source>
      <extracomment>gate.data-plane</extracomment>
      <translation>Datenebene</translation>
    </message>
    <message>
      <source>Registration</source>
      <extracomment>gate.registration</extracomment>
      <translation>Anmeldung</translation>
    </message>
    <message>
      <source>Reachability</source>
      <extracomment>gate.reachability</extracomment>
      <translation>Erreichbarkeit</translation>
    </message>
    <message>
      <source>Recipe</source>
      <extracomment>gate.recipe, recipes.column.recipe</extracomment>
      <translation>Rezept</translation>
    </message>
    <message>
      <source>Sessions</source>
      <extracomment>gate.sessions</extracomment>
      <translation>Sitzungen</translation>
    </message>
    <message>
      <source>Layers {start}–{end}, as set in Settings.</source>
      <extracomment>gate.placement.fixed</extracomment>
      <translation>Schichten {start}–{end}, wie in den Einstellungen festgelegt.</translation>
    </message>
    <message>
      <source>Not checked yet.</source>
      <extracomment>gate.not-checked</extracomment>
      <translation>Noch nicht geprüft.</translation>
    </message>
    <message>
      <source>Not reached.</source>
      <extracomment>gate.not-reached</extracomment>
      <translation>Nicht erreicht.</translation>
    </message>
    <message>
      <source>Report {age} old, stale in {left}.</source>
      <extracomment>gate.report.fresh</extracomment>
      <translation>Bericht {age} alt, veraltet in {left}.</translation>
    </message>
    <message>
      <source>Report {age} old: stale; Retry tests this computer again.</source>
      <extracomment>gate.report.stale</extracomment>
      <translation>Bericht {age} alt: veraltet; Erneut versuchen testet diesen Computer noch einmal.</translation>
    </message>
    <message>
      <source>MeshNet settings</source>
      <extracomment>settings.title</extracomment>
      <translation>MeshNet-Einstellungen</translation>
    </message>
    <message>
      <source>Save</source>
      <extracomment>settings.save</extracomment>
      <translation>Speichern</translation>
    </message>
    <message>
      <source>Save anyway</source>
      <extracomment>settings.save-anyway</extracomment>
      <translation>Trotzdem speichern</translation>
    </message>
    <message>
      <source>This computer</source>
      <extracomment>settings.tab.computer</extracomment>
      <translation>Dieser Computer</translation>
    </message>
    <message>
      <source>Pause rules</source>
      <extracomment>settings.tab.pause</extracomment>
      <translation>Pausenregeln</translation>
    </message>
    <message>
      <source>Tracker address:</source>
      <extracomment>settings.url</extracomment>
      <translation>Tracker-Adresse:</translation>
    </message>
    <message>
      <source>Tracker address</source>
      <extracomment>settings.url.name</extracomment>
      <translation>Tracker-Adresse</translation>
    </message>
    <message>
      <source>Check</source>
      <extracomment>settings.check</extracomment>
      <translation>Prüfen</translation>
    </message>
    <message>
      <source>Checking {url}…</source>
      <extracomment>settings.checking</extracomment>
      <translation>Prüfe {url}…</translation>
    </message>
    <message>
      <source>The check failed unexpectedly (it is logged); try again.</source>
      <extracomment>settings.check.failed</extracomment>
      <translation>Die Prüfung ist unerwartet fehlgeschlagen (das ist protokolliert); versuchen Sie es erneut.</translation>
    </message>
    <message>
      <source>Join token:</source>
      <extracomment>settings.token</extracomment>
      <translation>Beitritts-Token:</translation>
    </message>
    <message>
      <source>No join token</source>
      <extracomment>settings.token.none</extracomment>
      <translation>Kein Beitritts-Token</translation>
    </message>
    <message>
      <source>Show</source>
      <extracomment>settings.token.show</extracomment>
      <translation>Zeigen</translation>
    </message>
    <message>
      <source>Only for a private tracker; kept in this computer's keyring.</source>
      <extracomment>settings.token.note</extracomment>
      <translation>Nur für einen privaten Tracker; wird im Schlüsselbund dieses Computers aufbewahrt.</translation>
    </message>
    <message>
      <source>The join token was not kept: {error}.</source>
      <extracomment>settings.token.failed</extracomment>
      <translation>Das Beitritts-Token wurde nicht gespeichert: {error}.</translation>
    </message>
    <message>
      <source>This computer has not joined a network yet. Open Check this computer… and paste the invite you were sent.</source>
      <extracomment>settings.network.none</extracomment>
      <translation>Dieser Computer ist noch keinem Netzwerk beigetreten. Öffnen Sie „Diesen Computer prüfen…“ und fügen Sie die Einladung ein, die Sie erhalten haben.</translation>
    </message>
    <message>
      <source>This computer is part of {network}. To join another network or leave this one, choose Join another network… or Leave this network… in MeshNet's menu.</source>
      <extracomment>settings.network</extracomment>
      <translation>Dieser Computer gehört zu {network}. Um einem anderen Netzwerk beizutreten oder dieses zu verlassen, wählen Sie im Menü von MeshNet „Einem anderen Netzwerk beitreten…“ oder „Dieses Netzwerk verlassen…“.</translation>
    </message>
    <message>
      <source>Device:</source>
      <extracomment>settings.device</extracomment>
      <translation>Gerät:</translation>
    </message>
    <message>
      <source>Identity key ready: {node}</source>
      <extracomment>event.gate.identity</extracomment>
      <translation>Identitätsschlüssel bereit: {node}</translation>
    </message>
    <message>
      <source>This computer computed layers {start}–{end} correctly at {speed} tokens/s.</source>
      <extracomment>event.gate.capability</extracomment>
      <translation>Dieser Computer hat die Layer {start}–{end} korrekt mit {speed} Tokens/s berechnet.</translation>
    </message>
    <message>
      <source>Admitted: the report matches the loaded shard.</source>
      <extracomment>event.gate.admission</extracomment>
      <translation>Zugelassen: Der Bericht passt zum geladenen Shard.</translation>
    </message>
    <message>
      <source>Listening for other nodes at {endpoint}.</source>
      <extracomment>event.gate.data-plane</extracomment>
      <translation>Wartet auf andere Knoten unter {endpoint}.</translation>
    </message>
    <message>
      <source>Registered with the tracker.</source>
      <extracomment>event.gate.registration</extracomment>
      <translation>Beim Tracker registriert.</translation>
    </message>
    <message>
      <source>Other nodes can reach this computer.</source>
      <extracomment>event.gate.reachability</extracomment>
      <translation>Andere Knoten erreichen diesen Computer.</translation>
    </message>
    <message>
      <source>Serving through a relay: the tracker could not reach this computer directly.</source>
      <extracomment>event.gate.relay</extracomment>
      <translation>Dient über ein Relay: Der Tracker konnte diesen Computer nicht direkt erreichen.</translation>
    </message>
    <message>
      <source>{sessions} open sessions, {tokens} tokens served.</source>
      <extracomment>event.gate.sessions</extracomment>
      <translation>{sessions} offene Sitzungen, {tokens} Tokens bedient.</translation>
    </message>
    <message>
      <source>Empty: the card chosen on This computer; or cuda:1, mps, cpu</source>
      <extracomment>settings.device.own.hint</extracomment>
      <translation>Leer: die Karte von Dieser Computer; oder cuda:1, mps, cpu</translation>
    </message>
    <message>
      <source>Device, as the node names it</source>
      <extracomment>settings.device.own.name</extracomment>
      <translation>Gerät, wie der Knoten es nennt</translation>
    </message>
    <message>
      <source>For people who run their own network or try other models. Most people need only the first two pages.</source>
      <extracomment>settings.advanced.intro</extracomment>
      <translation>Für alle, die ein eigenes Netzwerk betreiben oder andere Modelle ausprobieren. Die meisten brauchen nur die ersten beiden Seiten.</translation>
    </message>
    <message>
      <source>Best available</source>
      <extracomment>settings.device.best</extracomment>
      <translation>Das beste verfügbare</translation>
    </message>
    <message>
      <source>Processor (CPU)</source>
      <extracomment>settings.device.cpu</extracomment>
      <translation>Prozessor (CPU)</translation>
    </message>
    <message>
      <source>NVIDIA graphics card</source>
      <extracomment>settings.device.nvidia</extracomment>
      <translation>NVIDIA-Grafikkarte</translation>
    </message>
    <message>
      <source>Apple graphics</source>
      <extracomment>settings.device.apple</extracomment>
      <translation>Apple-Grafik</translation>
    </message>
    <message>
      <source>The graphics card is the one the doctor found; type cuda:1 for a second one.</source>
      <extracomment>settings.device.found</extracomment>
      <translation>Die Grafikkarte ist die, die der Doctor gefunden hat; tippen Sie cuda:1 für eine zweite.</translation>
    </message>
    <message>
      <source>Run the doctor to list this computer's graphics card, or type one (cuda:0).</source>
      <extracomment>settings.device.none</extracomment>
      <translation>Starten Sie den Doctor, um die Grafikkarte dieses Computers aufzulisten, oder tippen Sie eine ein (cuda:0).</translation>
    </message>
    <message>
      <source>Model:</source>
      <extracomment>settings.model</extracomment>
      <translation>Modell:</translation>
    </message>
    <message>
      <source>The default model (SmolLM2-135M-Instruct)</source>
      <extracomment>settings.model.default</extracomment>
      <translation>Das Standardmodell (SmolLM2-135M-Instruct)</translation>
    </message>
    <message>
      <source>Choose folder…</source>
      <extracomment>settings.model.browse</extracomment>
      <translation>Ordner wählen…</translation>
    </message>
    <message>
      <source>Choose a model folder</source>
      <extracomment>settings.model.choose</extracomment>
      <translation>Einen Modellordner wählen</translation>
    </message>
    <message>
      <source>Download from Hugging Face…</source>
      <extracomment>settings.model.download</extracomment>
      <translation>Von Hugging Face herunterladen…</translation>
    </message>
    <message>
      <source>Download a model</source>
      <extracomment>hub.title</extracomment>
      <translation>Ein Modell herunterladen</translation>
    </message>
    <message>
      <source>Type the name of a model on Hugging Face, as its address shows it after huggingface.co/, such as {example}. MeshNet downloads only the files it needs.</source>
      <extracomment>hub.intro</extracomment>
      <translation>Geben Sie den Namen eines Modells auf Hugging Face ein, so wie seine Adresse ihn nach huggingface.co/ zeigt, etwa {example}. MeshNet lädt nur die Dateien herunter, die es braucht.</translation>
    </message>
    <message>
      <source>Model name:</source>
      <extracomment>hub.name</extracomment>
      <translation>Modellname:</translation>
    </message>
    <message>
      <source>Version:</source>
      <extracomment>hub.revision</extracomment>
      <translation>Version:</translation>
    </message>
    <message>
      <source>main (the newest)</source>
      <extracomment>hub.revision.hint</extracomment>
      <translation>main (die neueste)</translation>
    </message>
    <message>
      <source>A branch, tag or commit of the model; leave it empty for the newest.</source>
      <extracomment>hub.revision.tip</extracomment>
      <translation>Ein Branch, Tag oder Commit des Modells; leer lassen für die neueste Version.</translation>
    </message>
    <message>
      <source>&amp;Download</source>
      <extracomment>hub.download</extracomment>
      <translation>&amp;Herunterladen</translation>
    </message>
    <message>
      <source>Close</source>
      <extracomment>hub.close</extracomment>
      <translation>Schließen</translation>
    </message>
    <message>
      <source>Type the model's name as ORGANISATION/NAME, such as {example}: the part of its address after huggingface.co/.</source>
      <extracomment>hub.bad-name</extracomment>
      <translation>Geben Sie den Modellnamen als ORGANISATION/NAME ein, etwa {example}: der Teil seiner Adresse nach huggingface.co/.</translation>
    </message>
    <message>
      <source>A version has no spaces: type a branch, tag or commit, or leave the field empty for the newest.</source>
      <extracomment>hub.bad-revision</extracomment>
      <translation>Eine Version enthält keine Leerzeichen: Geben Sie einen Branch, Tag oder Commit ein, oder lassen Sie das Feld für die neueste Version leer.</translation>
    </message>
    <message>
      <source>Looking up {repo} on Hugging Face…</source>
      <extracomment>hub.looking-up</extracomment>
      <translation>{repo} wird auf Hugging Face gesucht…</translation>
    </message>
    <message>
      <source>Downloading {file}… {percent} %</source>
      <extracomment>hub.downloading-file</extracomment>
      <translation>{file} wird heruntergeladen… {percent} %</translation>
    </message>
    <message>
      <source>Downloading the model… {percent} %</source>
      <extracomment>hub.downloading</extracomment>
      <translation>Das Modell wird heruntergeladen… {percent} %</translation>
    </message>
    <message>
      <source>Downloading {file}…</source>
      <extracomment>hub.fetching</extracomment>
      <translation>{file} wird heruntergeladen…</translation>
    </message>
    <message>
      <source>Stopping the download…</source>
      <extracomment>hub.stopping</extracomment>
      <translation>Der Download wird angehalten…</translation>
    </message>
    <message>
      <source>Download cancelled. What arrived is kept, so downloading again continues where it stopped.</source>
      <extracomment>hub.cancelled</extracomment>
      <translation>Download abgebrochen. Was schon angekommen ist, bleibt erhalten; ein neuer Download macht dort weiter.</translation>
    </message>
    <message>
      <source>The download did not finish. Check the internet connection and the free disk space, then try again.</source>
      <extracomment>hub.failed</extracomment>
      <translation>Der Download wurde nicht fertig. Prüfen Sie die Internetverbindung und den freien Speicherplatz und versuchen Sie es erneut.</translation>
    </message>
    <message>
      <source>Hugging Face has no public model named {repo}. Check the spelling (copy the name from the model's page); a private or gated model needs a Hugging Face login on this computer first.</source>
      <extracomment>hub.error.repo-not-found</extracomment>
      <translation>Auf Hugging Face gibt es kein öffentliches Modell namens {repo}. Prüfen Sie die Schreibweise (kopieren Sie den Namen von der Seite des Modells); ein privates oder zugangsbeschränktes Modell braucht zuerst eine Hugging-Face-Anmeldung auf diesem Computer.</translation>
    </message>
    <message>
      <source>{repo} has no version {revision}. Leave the version empty for the newest, or copy a branch, tag or commit from the model's page.</source>
      <extracomment>hub.error.revision-not-found</extracomment>
      <translation>{repo} hat keine Version {revision}. Lassen Sie die Version für die neueste leer, oder kopieren Sie einen Branch, Tag oder Commit von der Seite des Modells.</translation>
    </message>
    <message>
      <source>Hugging Face could not be reached. Check the internet connection, then try again; what arrived is kept.</source>
      <extracomment>hub.error.hub-unreachable</extracomment>
      <translation>Hugging Face ist nicht erreichbar. Prüfen Sie die Internetverbindung und versuchen Sie es erneut; was schon angekommen ist, bleibt erhalten.</translation>
    </message>
    <message>
      <source>Downloads are switched off on this computer (HF_HUB_OFFLINE is set). Remove that setting, restart MeshNet and try again.</source>
      <extracomment>hub.error.hub-offline</extracomment>
      <translation>Downloads sind auf diesem Computer abgeschaltet (HF_HUB_OFFLINE ist gesetzt). Entfernen Sie diese Einstellung, starten Sie MeshNet neu und versuchen Sie es erneut.</translation>
    </message>
    <message>
      <source>MeshNet cannot run this kind of model yet. Choose another one, such as a Llama, Qwen or Gemma model.</source>
      <extracomment>hub.error.unsupported-architecture</extracomment>
      <translation>MeshNet kann diese Art von Modell noch nicht ausführen. Wählen Sie ein anderes, etwa ein Llama-, Qwen- oder Gemma-Modell.</translation>
    </message>
    <message>
      <source>Layers:</source>
      <extracomment>settings.layers</extracomment>
      <translation>Schichten:</translation>
    </message>
    <message>
      <source>Choose the layers myself (otherwise the doctor's suggestion)</source>
      <extracomment>settings.layers.own</extracomment>
      <translation>Schichten selbst wählen (sonst der Vorschlag des Doctors)</translation>
    </message>
    <message>
      <source>up to</source>
      <extracomment>settings.layers.up-to</extracomment>
      <translation>bis</translation>
    </message>
    <message>
      <source>Memory limit:</source>
      <extracomment>settings.memory</extracomment>
      <translation>Speichergrenze:</translation>
    </message>
    <message>
      <source>No limit</source>
      <extracomment>settings.memory.none</extracomment>
      <translation>Keine Grenze</translation>
    </message>
    <message>
      <source>Start MeshNet when I log in</source>
      <extracomment>settings.login</extracomment>
      <translation>MeshNet beim Anmelden starten</translation>
    </message>
    <message>
      <source>Could not turn on start at login ({error}): check that your user may change its login items, then try again.</source>
      <extracomment>settings.login.on-failed</extracomment>
      <translation>Start beim Anmelden konnte nicht eingeschaltet werden ({error}): Prüfen Sie, ob Ihr Benutzer seine Anmeldeobjekte ändern darf, und versuchen Sie es dann erneut.</translation>
    </message>
    <message>
      <source>Could not turn off start at login ({error}): check that your user may change its login items, then try again.</source>
      <extracomment>settings.login.off-failed</extracomment>
      <translation>Start beim Anmelden konnte nicht ausgeschaltet werden ({error}): Prüfen Sie, ob Ihr Benutzer seine Anmeldeobjekte ändern darf, und versuchen Sie es dann erneut.</translation>
    </message>
    <message>
      <source>Run batch jobs when not serving</source>
      <extracomment>settings.batch</extracomment>
      <translation>Stapelaufträge ausführen, wenn nichts ausgeliefert wird</translation>
    </message>
    <message>
      <source>While this computer is not serving a model, run the tracker's batch jobs (quality checks, bulk generation) in a sandboxed helper process.</source>
      <extracomment>settings.batch.tip</extracomment>
      <translation>Solange dieser Computer kein Modell ausliefert, die Stapelaufträge des Trackers (Qualitätsprüfungen, Massengenerierung) in einem abgeschotteten Hilfsprozess ausführen.</translation>
    </message>
    <message>
      <source>Graphics card:</source>
      <extracomment>settings.gpu</extracomment>
      <translation>Grafikkarte:</translation>
    </message>
    <message>
      <source>Pause while another program keeps the graphics card busy</source>
      <extracomment>settings.gpu.busy</extracomment>
      <translation>Pausieren, solange ein anderes Programm die Grafikkarte beschäftigt</translation>
    </message>
    <message>
      <source>Pause when the graphics card is hotter than</source>
      <extracomment>settings.gpu.hot</extracomment>
      <translation>Pausieren, wenn die Grafikkarte heißer ist als</translation>
    </message>
    <message>
      <source>First layer</source>
      <extracomment>settings.layers.from.name</extracomment>
      <translation>Erste Schicht</translation>
    </message>
    <message>
      <source>Up to layer</source>
      <extracomment>settings.layers.up-to.name</extracomment>
      <translation>Bis Schicht</translation>
    </message>
    <message>
      <source>Minutes without keyboard or mouse before contributing</source>
      <extracomment>settings.idle.name</extracomment>
      <translation>Minuten ohne Tastatur oder Maus, bevor das Beitragen beginnt</translation>
    </message>
    <message>
      <source>Join token</source>
      <extracomment>settings.token.name</extracomment>
      <translation>Beitritts-Token</translation>
    </message>
    <message>
      <source>Program to add</source>
      <extracomment>settings.programs.name</extracomment>
      <translation>Hinzuzufügendes Programm</translation>
    </message>
    <message>
      <source>Programs that pause contributing</source>
      <extracomment>settings.programs.list.name</extracomment>
      <translation>Programme, die das Beitragen pausieren</translation>
    </message>
    <message>
      <source>MeshNet cannot read this computer's graphics card (it can read NVIDIA cards only), so these two rules never pause it. Use the list of programs below instead.</source>
      <extracomment>settings.gpu.unmeasured</extracomment>
      <translation>MeshNet kann die Grafikkarte dieses Computers nicht auslesen (nur NVIDIA-Karten), daher pausieren diese beiden Regeln nie. Verwenden Sie stattdessen die Liste der Programme unten.</translation>
    </message>
    <message>
      <source>Programs:</source>
      <extracomment>settings.programs</extracomment>
      <translation>Programme:</translation>
    </message>
    <message>
      <source>Pause while any of these programs is running:</source>
      <extracomment>settings.programs.intro</extracomment>
      <translation>Pausieren, solange eines dieser Programme läuft:</translation>
    </message>
    <message>
      <source>Program file name, such as eldenring.exe</source>
      <extracomment>settings.programs.hint</extracomment>
      <translation>Dateiname des Programms, etwa eldenring.exe</translation>
    </message>
    <message>
      <source>Add</source>
      <extracomment>settings.programs.add</extracomment>
      <translation>Hinzufügen</translation>
    </message>
    <message>
      <source>Remove</source>
      <extracomment>settings.programs.remove</extracomment>
      <translation>Entfernen</translation>
    </message>
    <message>
      <source>Power:</source>
      <extracomment>settings.power</extracomment>
      <translation>Strom:</translation>
    </message>
    <message>
      <source>Pause on battery power</source>
      <extracomment>settings.battery</extracomment>
      <translation>Im Akkubetrieb pausieren</translation>
    </message>
    <message>
      <source>Idle:</source>
      <extracomment>settings.idle</extracomment>
      <translation>Leerlauf:</translation>
    </message>
    <message>
      <source>Contribute only after</source>
      <extracomment>settings.idle.after</extracomment>
      <translation>Erst beitragen nach</translation>
    </message>
    <message>
      <source> minutes</source>
      <extracomment>settings.idle.minutes</extracomment>
      <translation> Minuten</translation>
    </message>
    <message>
      <source>without keyboard or mouse use</source>
      <extracomment>settings.idle.untouched</extracomment>
      <translation>ohne Tastatur- oder Mausbenutzung</translation>
    </message>
    <message>
      <source>Contributing resumes by itself once the reason has passed.</source>
      <extracomment>settings.resumes</extracomment>
      <translation>Das Beitragen geht von selbst weiter, sobald der Grund vorbei ist.</translation>
    </message>
    <message>
      <source>Enter the tracker's address, such as http://127.0.0.1:8765.</source>
      <extracomment>problem.url.empty</extracomment>
      <translation>Geben Sie die Adresse des Trackers ein, etwa http://127.0.0.1:8765.</translation>
    </message>
    <message>
      <source>The tracker address is not a valid URL: check it, such as http://127.0.0.1:8765.</source>
      <extracomment>problem.url.invalid</extracomment>
      <translation>Die Tracker-Adresse ist keine gültige URL: Prüfen Sie sie, etwa http://127.0.0.1:8765.</translation>
    </message>
    <message>
      <source>The tracker address must start with http:// or https://.</source>
      <extracomment>problem.url.scheme</extracomment>
      <translation>Die Tracker-Adresse muss mit http:// oder https:// beginnen.</translation>
    </message>
    <message>
      <source>The tracker address needs a host name, such as http://tracker.example.org.</source>
      <extracomment>problem.url.host</extracomment>
      <translation>Die Tracker-Adresse braucht einen Hostnamen, etwa http://tracker.example.org.</translation>
    </message>
    <message>
      <source>Remove the empty program name, or type the program's file name.</source>
      <extracomment>problem.program.empty</extracomment>
      <translation>Entfernen Sie den leeren Programmnamen oder geben Sie den Dateinamen des Programms ein.</translation>
    </message>
    <message>
      <source>Enter only the program's file name, such as eldenring.exe, not a path: {name} contains a folder.</source>
      <extracomment>problem.program.path</extracomment>
      <translation>Geben Sie nur den Dateinamen des Programms ein, etwa eldenring.exe, keinen Pfad: {name} enthält einen Ordner.</translation>
    </message>
    <message>
      <source>Choose a model, or leave it empty to use the default model.</source>
      <extracomment>problem.model</extracomment>
      <translation>Wählen Sie ein Modell, oder lassen Sie das Feld leer für das Standardmodell.</translation>
    </message>
    <message>
      <source>The first layer must be 0 or more: raise the first number.</source>
      <extracomment>problem.layers.start</extracomment>
      <translation>Die erste Schicht muss 0 oder größer sein: Erhöhen Sie die erste Zahl.</translation>
    </message>
    <message>
      <source>Layers {start}–{end} is an empty range: make the last layer larger than the first, such as {start}–{next}.</source>
      <extracomment>problem.layers.empty</extracomment>
      <translation>Schichten {start}–{end} sind ein leerer Bereich: Machen Sie die letzte Schicht größer als die erste, etwa {start}–{next}.</translation>
    </message>
    <message>
      <source>Unknown device {device}: choose the CPU, a GPU (cuda:0, cuda:1, …) or mps.</source>
      <extracomment>problem.device</extracomment>
      <translation>Unbekanntes Gerät {device}: Wählen Sie die CPU, eine GPU (cuda:0, cuda:1, …) oder mps.</translation>
    </message>
    <message>
      <source>Choose a GPU temperature between {low} and {high} °C ({temp} °C is outside that range).</source>
      <extracomment>problem.gpu-temp</extracomment>
      <translation>Wählen Sie eine GPU-Temperatur zwischen {low} und {high} °C ({temp} °C liegt außerhalb).</translation>
    </message>
    <message>
      <source>Choose between {low} and {high} idle minutes ({idle} is outside that range), or turn the idle rule off.</source>
      <extracomment>problem.idle</extracomment>
      <translation>Wählen Sie zwischen {low} und {high} Minuten Leerlauf ({idle} liegt außerhalb), oder schalten Sie die Leerlauf-Regel aus.</translation>
    </message>
    <message>
      <source>Use at most {count} letters, digits or signs on one line, or leave it empty.</source>
      <extracomment>problem.label</extracomment>
      <translation>Verwenden Sie höchstens {count} Buchstaben, Ziffern oder Zeichen in einer Zeile, oder lassen Sie das Feld leer.</translation>
    </message>
    <message>
      <source>Connected to a MeshNet tracker: {nodes}, {recipes}.</source>
      <extracomment>tracker.connected</extracomment>
      <translation>Mit einem MeshNet-Tracker verbunden: {nodes}, {recipes}.</translation>
    </message>
    <message>
      <source>1 live node</source>
      <extracomment>tracker.nodes.one</extracomment>
      <translation>1 aktiver Knoten</translation>
    </message>
    <message>
      <source>{count} live nodes</source>
      <extracomment>tracker.nodes</extracomment>
      <translation>{count} aktive Knoten</translation>
    </message>
    <message>
      <source>1 recipe</source>
      <extracomment>tracker.recipes.one</extracomment>
      <translation>1 Rezept</translation>
    </message>
    <message>
      <source>{count} recipes</source>
      <extracomment>tracker.recipes</extracomment>
      <translation>{count} Rezepte</translation>
    </message>
    <message>
      <source>Nothing answers at {url}: check the address and port, and that the tracker is running.</source>
      <extracomment>tracker.refused</extracomment>
      <translation>Unter {url} antwortet nichts: Prüfen Sie Adresse und Port und ob der Tracker läuft.</translation>
    </message>
    <message>
      <source>Could not reach {url} ({error}): check the address and your network connection.</source>
      <extracomment>tracker.unreachable</extracomment>
      <translation>{url} war nicht erreichbar ({error}): Prüfen Sie die Adresse und Ihre Netzwerkverbindung.</translation>
    </message>
    <message>
      <source>{url} did not answer within {seconds} s: check the address, or try again when the network is less busy.</source>
      <extracomment>tracker.timeout</extracomment>
      <translation>{url} hat nicht innerhalb von {seconds} s geantwortet: Prüfen Sie die Adresse, oder versuchen Sie es erneut, wenn das Netzwerk weniger ausgelastet ist.</translation>
    </message>
    <message>
      <source>Could not read {url} ({error}): check the address and try again.</source>
      <extracomment>tracker.unreadable</extracomment>
      <translation>{url} konnte nicht gelesen werden ({error}): Prüfen Sie die Adresse und versuchen Sie es erneut.</translation>
    </message>
    <message>
      <source>{url} answered with HTTP {status} {phrase}: check the address, or ask the tracker's operator.</source>
      <extracomment>tracker.http</extracomment>
      <translation>{url} antwortete mit HTTP {status} {phrase}: Prüfen Sie die Adresse, oder fragen Sie den Betreiber des Trackers.</translation>
    </message>
    <message>
      <source>{url} answered with HTTP {status}: ask the network's organiser.</source>
      <extracomment>tracker.http.network</extracomment>
      <translation>{url} antwortete mit HTTP {status}: Fragen Sie den Organisator des Netzwerks.</translation>
    </message>
    <message>
      <source>{url} is not a MeshNet tracker ({why}): check the address and port.</source>
      <extracomment>tracker.not-meshnet</extracomment>
      <translation>{url} ist kein MeshNet-Tracker ({why}): Prüfen Sie Adresse und Port.</translation>
    </message>
    <message>
      <source>it has no MeshNet state page</source>
      <extracomment>tracker.why.no-state-page</extracomment>
      <translation>er hat keine MeshNet-Statusseite</translation>
    </message>
    <message>
      <source>its answer is not JSON</source>
      <extracomment>tracker.why.not-json</extracomment>
      <translation>seine Antwort ist kein JSON</translation>
    </message>
    <message>
      <source>its answer is not a MeshNet state</source>
      <extracomment>tracker.why.not-state</extracomment>
      <translation>seine Antwort ist kein MeshNet-Status</translation>
    </message>
    <message>
      <source>its state has no generated_at time</source>
      <extracomment>tracker.why.no-time</extracomment>
      <translation>sein Status hat keine generated_at-Zeit</translation>
    </message>
    <message>
      <source>its state has no {name} list</source>
      <extracomment>tracker.why.no-list</extracomment>
      <translation>sein Status hat keine {name}-Liste</translation>
    </message>
    <message>
      <source>its state has no live node count</source>
      <extracomment>tracker.why.no-count</extracomment>
      <translation>sein Status hat keine Anzahl aktiver Knoten</translation>
    </message>
    <message>
      <source>its recipe list is not in the MeshNet shape</source>
      <extracomment>tracker.why.recipes</extracomment>
      <translation>seine Rezeptliste hat nicht die MeshNet-Form</translation>
    </message>
    <message>
      <source>its layer suggestion is not in the MeshNet shape</source>
      <extracomment>tracker.why.allocation</extracomment>
      <translation>sein Schichtvorschlag hat nicht die MeshNet-Form</translation>
    </message>
    <message>
      <source>its network answer is not in the MeshNet shape</source>
      <extracomment>tracker.why.network</extracomment>
      <translation>seine Netzwerk-Antwort hat nicht die MeshNet-Form</translation>
    </message>
    <message>
      <source>{url} cannot suggest layers (it does not know this model or is an older tracker); the suggestion below is from this computer alone.</source>
      <extracomment>tracker.no-suggestion</extracomment>
      <translation>{url} kann keine Schichten vorschlagen (er kennt dieses Modell nicht oder ist ein älterer Tracker); der Vorschlag unten stammt nur von diesem Computer.</translation>
    </message>
    <message>
      <source>{url} could not suggest layers (HTTP {status}).</source>
      <extracomment>tracker.suggestion.failed</extracomment>
      <translation>{url} konnte keine Schichten vorschlagen (HTTP {status}).</translation>
    </message>
    <message>
      <source>{url} could not suggest layers (HTTP {status}: {detail}).</source>
      <extracomment>tracker.suggestion.failed.detail</extracomment>
      <translation>{url} konnte keine Schichten vorschlagen (HTTP {status}: {detail}).</translation>
    </message>
    <message>
      <source>Starting the node…</source>
      <extracomment>node.starting</extracomment>
      <translation>Knoten wird gestartet…</translation>
    </message>
    <message>
      <source>Stopping: handing open sessions to other computers and leaving the network…</source>
      <extracomment>node.stopping</extracomment>
      <translation>Wird beendet: offene Sitzungen werden an andere Computer übergeben, dann wird das Netzwerk verlassen…</translation>
    </message>
    <message>
      <source>Contribution is off.</source>
      <extracomment>node.off</extracomment>
      <translation>Mithelfen ist aus.</translation>
    </message>
    <message>
      <source>Contribution is off (the node had to be ended).</source>
      <extracomment>node.off.ended</extracomment>
      <translation>Mithelfen ist aus (der Knoten musste beendet werden).</translation>
    </message>
    <message>
      <source>MeshNet could not start the node: {error}</source>
      <extracomment>node.cannot-start</extracomment>
      <translation>MeshNet konnte den Knoten nicht starten: {error}</translation>
    </message>
    <message>
      <source>The node stopped unexpectedly ({detail}). Retry, or run the doctor.</source>
      <extracomment>node.crashed</extracomment>
      <translation>Der Knoten hat unerwartet angehalten ({detail}). Erneut versuchen, oder den Doctor starten.</translation>
    </message>
    <message>
      <source>it was ended or could not start</source>
      <extracomment>node.crashed.ended</extracomment>
      <translation>er wurde beendet oder konnte nicht starten</translation>
    </message>
    <message>
      <source>exit code {code}</source>
      <extracomment>node.crashed.code</extracomment>
      <translation>Exit-Code {code}</translation>
    </message>
    <message>
      <source>The node did not stop in time, so MeshNet ended it.</source>
      <extracomment>node.killed</extracomment>
      <translation>Der Knoten hat nicht rechtzeitig angehalten, daher hat MeshNet ihn beendet.</translation>
    </message>
    <message>
      <source>The node could not start: {error}</source>
      <extracomment>node.start-failed</extracomment>
      <translation>Der Knoten konnte nicht starten: {error}</translation>
    </message>
    <message>
      <source>MeshNet recipes</source>
      <extracomment>recipes.title</extracomment>
      <translation>MeshNet-Rezepte</translation>
    </message>
    <message>
      <source>Model</source>
      <extracomment>recipes.column.model</extracomment>
      <translation>Modell</translation>
    </message>
    <message>
      <source>Model digest</source>
      <extracomment>recipes.column.model-digest</extracomment>
      <translation>Modell-Prüfsumme</translation>
    </message>
    <message>
      <source>Recipe digest</source>
      <extracomment>recipes.column.recipe-digest</extracomment>
      <translation>Rezept-Prüfsumme</translation>
    </message>
    <message>
      <source>Certified on</source>
      <extracomment>recipes.column.certified-on</extracomment>
      <translation>Zertifiziert am</translation>
    </message>
    <message>
      <source>Nodes</source>
      <extracomment>recipes.column.nodes</extracomment>
      <translation>Knoten</translation>
    </message>
    <message>
      <source>Detail</source>
      <extracomment>recipes.column.detail</extracomment>
      <translation>Einzelheiten</translation>
    </message>
    <message>
      <source>Certified</source>
      <extracomment>recipes.certified</extracomment>
      <translation>Zertifiziert</translation>
    </message>
    <message>
      <source>Dark</source>
      <extracomment>recipes.dark</extracomment>
      <translation>Dunkel</translation>
    </message>
    <message>
      <source>Certified: a whole route of nodes produced matching output with this recipe.</source>
      <extracomment>recipes.certified.help</extracomment>
      <translation>Zertifiziert: Eine ganze Route von Knoten hat mit diesem Rezept übereinstimmende Ergebnisse erzeugt.</translation>
    </message>
    <message>
      <source>Dark: not certified yet. The tracker certifies it once a full route has proven it.</source>
      <extracomment>recipes.dark.help</extracomment>
      <translation>Dunkel: noch nicht zertifiziert. Der Tracker zertifiziert es, sobald eine vollständige Route es bewiesen hat.</translation>
    </message>
    <message>
      <source>Filter by model, recipe, status or digest</source>
      <extracomment>recipes.filter</extracomment>
      <translation>Nach Modell, Rezept, Status oder Prüfsumme filtern</translation>
    </message>
    <message>
      <source>★ marks the recipe this computer serves.</source>
      <extracomment>recipes.legend</extracomment>
      <translation>★ markiert das Rezept, das dieser Computer ausliefert.</translation>
    </message>
    <message>
      <source>This computer serves this recipe.</source>
      <extracomment>recipes.served.tip</extracomment>
      <translation>Dieser Computer liefert dieses Rezept aus.</translation>
    </message>
    <message>
      <source>{count} layers</source>
      <extracomment>recipes.layers</extracomment>
      <translation>{count} Schichten</translation>
    </message>
    <message>
      <source>{detail} Why dark: {why}</source>
      <extracomment>recipes.why-dark</extracomment>
      <translation>{detail} Warum dunkel: {why}</translation>
    </message>
    <message>
      <source>Reading recipes from {url}…</source>
      <extracomment>recipes.reading</extracomment>
      <translation>Lese Rezepte von {url}…</translation>
    </message>
    <message>
      <source>Updated {time}: {count} recipes, {certified} certified, {dark} dark.</source>
      <extracomment>recipes.updated</extracomment>
      <translation>Aktualisiert {time}: {count} Rezepte, {certified} zertifiziert, {dark} dunkel.</translation>
    </message>
    <message>
      <source>The tracker knows no recipes yet: they appear once nodes register.</source>
      <extracomment>recipes.empty</extracomment>
      <translation>Der Tracker kennt noch keine Rezepte: Sie erscheinen, sobald sich Knoten anmelden.</translation>
    </message>
    <message>
      <source>Could not read recipes: {sentence}</source>
      <extracomment>recipes.failed</extracomment>
      <translation>Rezepte konnten nicht gelesen werden: {sentence}</translation>
    </message>
    <message>
      <source>Could not read recipes: {sentence} The list shows the last recipes read.</source>
      <extracomment>recipes.failed.kept</extracomment>
      <translation>Rezepte konnten nicht gelesen werden: {sentence} Die Liste zeigt die zuletzt gelesenen Rezepte.</translation>
    </message>
    <message>
      <source>Something went wrong reading the recipes; it is logged. Try Refresh.</source>
      <extracomment>recipes.failed.other</extracomment>
      <translation>Beim Lesen der Rezepte ist etwas schiefgegangen; das ist protokolliert. Versuchen Sie Aktualisieren.</translation>
    </message>
  </context>
</TS>
