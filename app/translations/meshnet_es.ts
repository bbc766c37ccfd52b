<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="es">
  <context>
    <name>meshnet</name>
    <message>
      <source>Contribute</source>
      <extracomment>action.contribute</extracomment>
      <translation>Colaborar</translation>
    </message>
    <message>
      <source>Let this computer help answer questions, or stop</source>
      <extracomment>action.contribute.tip</extracomment>
      <translation>Dejar que este ordenador ayude a responder preguntas, o dejar de hacerlo</translation>
    </message>
    <message>
      <source>Pause for 1 hour</source>
      <extracomment>action.pause</extracomment>
      <translation>Pausar 1 hora</translation>
    </message>
    <message>
      <source>Resume now</source>
      <extracomment>action.resume</extracomment>
      <translation>Reanudar ahora</translation>
    </message>
    <message>
      <source>Pause</source>
      <extracomment>action.pause.menu</extracomment>
      <translation>Pausar</translation>
    </message>
    <message>
      <source>For 1 hour</source>
      <extracomment>action.pause.hour</extracomment>
      <translation>Durante 1 hora</translation>
    </message>
    <message>
      <source>Until I resume</source>
      <extracomment>action.pause.until-resume</extracomment>
      <translation>Hasta que yo reanude</translation>
    </message>
    <message>
      <source>Until the computer restarts</source>
      <extracomment>action.pause.until-restart</extracomment>
      <translation>Hasta que el ordenador se reinicie</translation>
    </message>
    <message>
      <source>Network</source>
      <extracomment>action.network</extracomment>
      <translation>Red</translation>
    </message>
    <message>
      <source>Join another network…</source>
      <extracomment>action.join-another</extracomment>
      <translation>Unirse a otra red…</translation>
    </message>
    <message>
      <source>Leave this network…</source>
      <extracomment>action.leave</extracomment>
      <translation>Salir de esta red…</translation>
    </message>
    <message>
      <source>Stop contributing for an hour, then carry on by itself</source>
      <extracomment>action.pause.tip</extracomment>
      <translation>Dejar de colaborar durante una hora y luego seguir por sí solo</translation>
    </message>
    <message>
      <source>Check this computer…</source>
      <extracomment>action.check, button.check</extracomment>
      <translation>Comprobar este ordenador…</translation>
    </message>
    <message>
      <source>Test what this computer can do for the network</source>
      <extracomment>action.check.tip</extracomment>
      <translation>Probar lo que este ordenador puede hacer por la red</translation>
    </message>
    <message>
      <source>Status</source>
      <extracomment>action.status, recipes.column.status</extracomment>
      <translation>Estado</translation>
    </message>
    <message>
      <source>What this network serves</source>
      <extracomment>action.serves, button.serves, serves.title</extracomment>
      <translation>Qué ofrece esta red</translation>
    </message>
    <message>
      <source>Settings</source>
      <extracomment>action.settings</extracomment>
      <translation>Ajustes</translation>
    </message>
    <message>
      <source>Quit</source>
      <extracomment>action.quit</extracomment>
      <translation>Salir</translation>
    </message>
    <message>
      <source>Stop contributing and close MeshNet</source>
      <extracomment>action.quit.tip</extracomment>
      <translation>Dejar de colaborar y cerrar MeshNet</translation>
    </message>
    <message>
      <source>Not contributing</source>
      <extracomment>state.stopped, headline.stopped</extracomment>
      <translation>No colabora</translation>
    </message>
    <message>
      <source>Getting ready</source>
      <extracomment>state.loading, state.admitting, state.starting</extracomment>
      <translation>Preparándose</translation>
    </message>
    <message>
      <source>Testing this computer</source>
      <extracomment>state.probing, test.title</extracomment>
      <translation>Probando este ordenador</translation>
    </message>
    <message>
      <source>Joining the network</source>
      <extracomment>state.registering</extracomment>
      <translation>Uniéndose a la red</translation>
    </message>
    <message>
      <source>Contributing</source>
      <extracomment>state.serving, headline.serving, notify.contributing</extracomment>
      <translation>Colaborando</translation>
    </message>
    <message>
      <source>Reconnecting</source>
      <extracomment>state.reconnecting</extracomment>
      <translation>Reconectando</translation>
    </message>
    <message>
      <source>Stopping</source>
      <extracomment>state.draining, headline.draining</extracomment>
      <translation>Deteniéndose</translation>
    </message>
    <message>
      <source>Pausing</source>
      <extracomment>state.pausing</extracomment>
      <translation>Pausando</translation>
    </message>
    <message>
      <source>Paused</source>
      <extracomment>state.paused, headline.paused</extracomment>
      <translation>En pausa</translation>
    </message>
    <message>
      <source>Not accepted</source>
      <extracomment>state.refused, notify.refused</extracomment>
      <translation>No aceptado</translation>
    </message>
    <message>
      <source>Stopped by a problem</source>
      <extracomment>state.error</extracomment>
      <translation>Detenido por un problema</translation>
    </message>
    <message>
      <source>MeshNet — contributing: helping answer questions</source>
      <extracomment>tooltip.serving</extracomment>
      <translation>MeshNet — colaborando: ayuda a responder preguntas</translation>
    </message>
    <message>
      <source>MeshNet — contributing through a relay: helping answer questions</source>
      <extracomment>tooltip.serving.relay</extracomment>
      <translation>MeshNet — colaborando a través de un relé: ayuda a responder preguntas</translation>
    </message>
    <message>
      <source>MeshNet — not contributing</source>
      <extracomment>tooltip.stopped</extracomment>
      <translation>MeshNet — no colabora</translation>
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
      <translation>Pulse «Empezar a colaborar» para que este ordenador ayude a la red a responder preguntas. Se pausa solo cuando usted necesita el ordenador.</translation>
    </message>
    <message>
      <source>Thank you: this computer is helping the network answer questions.</source>
      <extracomment>sentence.serving</extracomment>
      <translation>Gracias: este ordenador ayuda a la red a responder preguntas.</translation>
    </message>
    <message>
      <source>Thank you: this computer is helping the network answer questions with {model}.</source>
      <extracomment>sentence.serving.model</extracomment>
      <translation>Gracias: este ordenador ayuda a la red a responder preguntas con {model}.</translation>
    </message>
    <message>
      <source>It connects through a relay, because the network cannot reach this computer directly (a home router usually blocks that).</source>
      <extracomment>sentence.relay</extracomment>
      <translation>Se conecta a través de un relé, porque la red no puede llegar a este ordenador directamente (un router doméstico suele impedirlo).</translation>
    </message>
    <message>
      <source>Contribution is paused; it carries on by itself.</source>
      <extracomment>sentence.paused</extracomment>
      <translation>La colaboración está en pausa; seguirá por sí sola.</translation>
    </message>
    <message>
      <source>The memory MeshNet used was free again {seconds} seconds after the pause.</source>
      <extracomment>sentence.paused.released</extracomment>
      <translation>La memoria que usaba MeshNet quedó libre {seconds} segundos después de la pausa.</translation>
    </message>
    <message>
      <source>The network did not accept this computer</source>
      <extracomment>headline.refused</extracomment>
      <translation>La red no aceptó este ordenador</translation>
    </message>
    <message>
      <source>Contribution stopped</source>
      <extracomment>headline.error</extracomment>
      <translation>Colaboración detenida</translation>
    </message>
    <message>
      <source>Handing the answers under way to other computers, then leaving the network…</source>
      <extracomment>sentence.draining</extracomment>
      <translation>Pasando las respuestas en curso a otros ordenadores y saliendo de la red…</translation>
    </message>
    <message>
      <source>Loading the model onto this computer…</source>
      <extracomment>sentence.loading</extracomment>
      <translation>Cargando el modelo en este ordenador…</translation>
    </message>
    <message>
      <source>Checking that this computer gives correct answers…</source>
      <extracomment>sentence.probing</extracomment>
      <translation>Comprobando que este ordenador da respuestas correctas…</translation>
    </message>
    <message>
      <source>Checking the test result…</source>
      <extracomment>sentence.admitting</extracomment>
      <translation>Comprobando el resultado de la prueba…</translation>
    </message>
    <message>
      <source>Getting ready to answer questions…</source>
      <extracomment>sentence.starting</extracomment>
      <translation>Preparándose para responder preguntas…</translation>
    </message>
    <message>
      <source>Telling the network this computer is ready…</source>
      <extracomment>sentence.registering</extracomment>
      <translation>Avisando a la red de que este ordenador está listo…</translation>
    </message>
    <message>
      <source>The connection to the network was lost; trying again…</source>
      <extracomment>sentence.reconnecting</extracomment>
      <translation>Se perdió la conexión con la red; volviendo a intentarlo…</translation>
    </message>
    <message>
      <source>{sentence} ({percent}%)</source>
      <extracomment>sentence.percent</extracomment>
      <translation>{sentence} ({percent} %)</translation>
    </message>
    <message>
      <source>This computer ran out of graphics memory. Check this computer again and choose to use more of its memory, or close other programs.</source>
      <extracomment>why.out-of-memory</extracomment>
      <translation>Este ordenador se quedó sin memoria gráfica. Vuelva a comprobarlo y elija usar más memoria, o cierre otros programas.</translation>
    </message>
    <message>
      <source>This computer does not have enough free memory for this network's model right now. Close other programs, then click Retry.</source>
      <extracomment>why.too-little-memory</extracomment>
      <translation>Este ordenador no tiene ahora memoria libre suficiente para el modelo de esta red. Cierre otros programas y pulse «Reintentar».</translation>
    </message>
    <message>
      <source>The model could not be loaded. Check this computer again; it fetches the model again if something is missing.</source>
      <extracomment>why.load-failed</extracomment>
      <translation>No se pudo cargar el modelo. Vuelva a comprobar este ordenador; descargará de nuevo lo que falte.</translation>
    </message>
    <message>
      <source>This computer did not give correct answers in its test. Check this computer again; if it keeps failing, copy the details for whoever helps you.</source>
      <extracomment>why.test-failed</extracomment>
      <translation>Este ordenador no dio respuestas correctas en su prueba. Vuelva a comprobarlo; si sigue fallando, copie los detalles para quien le ayude.</translation>
    </message>
    <message>
      <source>The last test of this computer was too old. Click Retry: MeshNet tests it again by itself.</source>
      <extracomment>why.stale</extracomment>
      <translation>La última prueba de este ordenador era demasiado antigua. Pulse «Reintentar»: MeshNet lo vuelve a probar por sí solo.</translation>
    </message>
    <message>
      <source>This computer's last test was for a different setup. Click Retry to test it again.</source>
      <extracomment>why.mismatch</extracomment>
      <translation>La última prueba de este ordenador era para otra configuración. Pulse «Reintentar» para probarlo de nuevo.</translation>
    </message>
    <message>
      <source>MeshNet could not reach the network. Check the internet connection, then click Retry.</source>
      <extracomment>why.network</extracomment>
      <translation>MeshNet no pudo llegar a la red. Compruebe la conexión a internet y pulse «Reintentar».</translation>
    </message>
    <message>
      <source>MeshNet's helper program stopped unexpectedly. Click Retry; if it happens again, copy the details for whoever helps you.</source>
      <extracomment>why.crashed</extracomment>
      <translation>El programa auxiliar de MeshNet se detuvo inesperadamente. Pulse «Reintentar»; si vuelve a ocurrir, copie los detalles para quien le ayude.</translation>
    </message>
    <message>
      <source>This computer passed its test, but part of MeshNet would not start on it. Update or reinstall MeshNet, then check this computer again.</source>
      <extracomment>why.cannot-serve</extracomment>
      <translation>Este ordenador superó su prueba, pero una parte de MeshNet no se pudo iniciar en él. Actualice o reinstale MeshNet y luego compruebe este ordenador de nuevo.</translation>
    </message>
    <message>
      <source>MeshNet's helper program stopped twice in a row, so MeshNet will not start it again by itself. Copy the diagnostics for whoever helps you.</source>
      <extracomment>why.crashed-twice</extracomment>
      <translation>El programa auxiliar de MeshNet se detuvo dos veces seguidas, así que MeshNet no volverá a iniciarlo por sí solo. Copie el diagnóstico para quien le ayude.</translation>
    </message>
    <message>
      <source>MeshNet could not start with the current settings. Open Settings and check them, then click Retry.</source>
      <extracomment>why.settings</extracomment>
      <translation>MeshNet no pudo arrancar con los ajustes actuales. Abra los ajustes, revíselos y pulse «Reintentar».</translation>
    </message>
    <message>
      <source>This computer has not joined a network yet. Open an invite to join one.</source>
      <extracomment>why.not-joined</extracomment>
      <translation>Este ordenador aún no se ha unido a ninguna red. Abra una invitación para unirse a una.</translation>
    </message>
    <message>
      <source>Something went wrong. Click Retry; the details say more for whoever helps you.</source>
      <extracomment>why.other</extracomment>
      <translation>Algo salió mal. Pulse «Reintentar»; los detalles dan más información a quien le ayude.</translation>
    </message>
    <message>
      <source>The network did not accept this computer this time. Click Retry; the details say why, for whoever helps you.</source>
      <extracomment>why.refused</extracomment>
      <translation>La red no aceptó este ordenador esta vez. Pulse «Reintentar»; los detalles explican el motivo a quien le ayude.</translation>
    </message>
    <message>
      <source>Start contributing</source>
      <extracomment>button.start</extracomment>
      <translation>Empezar a colaborar</translation>
    </message>
    <message>
      <source>Stop contributing</source>
      <extracomment>button.stop</extracomment>
      <translation>Dejar de colaborar</translation>
    </message>
    <message>
      <source>Retry</source>
      <extracomment>button.retry</extracomment>
      <translation>Reintentar</translation>
    </message>
    <message>
      <source>Open settings</source>
      <extracomment>button.settings</extracomment>
      <translation>Abrir ajustes</translation>
    </message>
    <message>
      <source>Join another network</source>
      <extracomment>button.join, join.another</extracomment>
      <translation>Unirse a otra red</translation>
    </message>
    <message>
      <source>&amp;Details</source>
      <extracomment>button.details</extracomment>
      <translation>&amp;Detalles</translation>
    </message>
    <message>
      <source>The technical steps, the log and the usage chart, for the curious and for whoever helps you</source>
      <extracomment>button.details.tip</extracomment>
      <translation>Los pasos técnicos, el registro y el gráfico de uso, para curiosos y para quien le ayude</translation>
    </message>
    <message>
      <source>words written today</source>
      <extracomment>stat.today</extracomment>
      <translation>palabras escritas hoy</translation>
    </message>
    <message>
      <source>this week</source>
      <extracomment>stat.week, credit.week</extracomment>
      <translation>esta semana</translation>
    </message>
    <message>
      <source>in all</source>
      <extracomment>stat.total, credit.total</extracomment>
      <translation>en total</translation>
    </message>
    <message>
      <source>contributing for</source>
      <extracomment>stat.time</extracomment>
      <translation>colaborando desde hace</translation>
    </message>
    <message>
      <source>Words of answers this computer helped write, as the model counts them (a long word can count as two)</source>
      <extracomment>stat.words.tip</extracomment>
      <translation>Palabras de respuestas que este ordenador ayudó a escribir, contadas como las cuenta el modelo (una palabra larga puede contar doble)</translation>
    </message>
    <message>
      <source>Your contribution</source>
      <extracomment>status.contribution</extracomment>
      <translation>Su aportación</translation>
    </message>
    <message>
      <source>Network: {name}</source>
      <extracomment>status.network</extracomment>
      <translation>Red: {name}</translation>
    </message>
    <message>
      <source>No network joined yet</source>
      <extracomment>status.network.none</extracomment>
      <translation>Aún no se ha unido a ninguna red</translation>
    </message>
    <message>
      <source>Your credit</source>
      <extracomment>credit.title</extracomment>
      <translation>Su crédito</translation>
    </message>
    <message>
      <source>credit today</source>
      <extracomment>credit.today</extracomment>
      <translation>crédito hoy</translation>
    </message>
    <message>
      <source>rank on the leaderboard</source>
      <extracomment>credit.rank</extracomment>
      <translation>puesto en la clasificación</translation>
    </message>
    <message>
      <source>Credit the network gives this computer for the answers it helped with and the network checked</source>
      <extracomment>credit.tip</extracomment>
      <translation>Crédito que la red da a este ordenador por las respuestas en las que ayudó y que la red comprobó</translation>
    </message>
    <message>
      <source>Your credit shows here once this computer has joined a network and started contributing.</source>
      <extracomment>credit.waiting</extracomment>
      <translation>Su crédito aparece aquí cuando este ordenador se haya unido a una red y empiece a colaborar.</translation>
    </message>
    <message>
      <source>The network took this computer's credit away because some of its answers were wrong. Check this computer again.</source>
      <extracomment>credit.forfeited</extracomment>
      <translation>La red le quitó el crédito a este ordenador porque algunas de sus respuestas eran incorrectas. Vuelva a comprobar este ordenador.</translation>
    </message>
    <message>
      <source>Credit: {today} today, {total} in all, rank {rank}</source>
      <extracomment>credit.line</extracomment>
      <translation>Crédito: {today} hoy, {total} en total, puesto {rank}</translation>
    </message>
    <message>
      <source>Credit: taken away by the network</source>
      <extracomment>credit.line.forfeited</extracomment>
      <translation>Crédito: retirado por la red</translation>
    </message>
    <message>
      <source>On the leaderboard as {name}, team {team}</source>
      <extracomment>credit.listed.both</extracomment>
      <translation>En la clasificación como {name}, equipo {team}</translation>
    </message>
    <message>
      <source>On the leaderboard as {name}</source>
      <extracomment>credit.listed.name</extracomment>
      <translation>En la clasificación como {name}</translation>
    </message>
    <message>
      <source>On the leaderboard in team {team}</source>
      <extracomment>credit.listed.team</extracomment>
      <translation>En la clasificación en el equipo {team}</translation>
    </message>
    <message>
      <source>What this computer gives now</source>
      <extracomment>use.title</extracomment>
      <translation>Lo que este ordenador aporta ahora</translation>
    </message>
    <message>
      <source>MeshNet uses nothing on this computer while it is not contributing.</source>
      <extracomment>use.none</extracomment>
      <translation>MeshNet no usa nada de este ordenador mientras no colabora.</translation>
    </message>
    <message>
      <source>MeshNet cannot measure how much of this computer it uses right now.</source>
      <extracomment>use.unknown</extracomment>
      <translation>MeshNet no puede medir ahora cuánto usa de este ordenador.</translation>
    </message>
    <message>
      <source>Using {used} of {total} of graphics memory.</source>
      <extracomment>use.gpu</extracomment>
      <translation>Usa {used} de {total} de memoria gráfica.</translation>
    </message>
    <message>
      <source>Using {used} of {total} of graphics memory; the graphics card is {busy} busy.</source>
      <extracomment>use.gpu.busy</extracomment>
      <translation>Usa {used} de {total} de memoria gráfica; la tarjeta gráfica está ocupada al {busy}.</translation>
    </message>
    <message>
      <source>Using {ram} of memory and {cpu} of the processor.</source>
      <extracomment>use.cpu</extracomment>
      <translation>Usa {ram} de memoria y el {cpu} del procesador.</translation>
    </message>
    <message>
      <source>Using {ram} of memory.</source>
      <extracomment>use.cpu.memory</extracomment>
      <translation>Usa {ram} de memoria.</translation>
    </message>
    <message>
      <source>Measured every few seconds from MeshNet's own programs; the rest of the computer is yours.</source>
      <extracomment>use.tip</extracomment>
      <translation>Medido cada pocos segundos en los programas de MeshNet; el resto del ordenador es suyo.</translation>
    </message>
    <message>
      <source>What it earns</source>
      <extracomment>earn.title</extracomment>
      <translation>Lo que gana</translation>
    </message>
    <message>
      <source>This computer earned {today} credit today and {week} this week.</source>
      <extracomment>credit.earned</extracomment>
      <translation>Este ordenador ha ganado {today} de crédito hoy y {week} esta semana.</translation>
    </message>
    <message>
      <source>No credit yet: it comes once the network has checked this computer's answers.</source>
      <extracomment>credit.none-yet</extracomment>
      <translation>Aún no hay crédito: llega cuando la red haya comprobado las respuestas de este ordenador.</translation>
    </message>
    <message>
      <source>Credit puts your own questions first in line when the network is busy: {credit} credit is about {words} words of answers.</source>
      <extracomment>credit.buys</extracomment>
      <translation>El crédito pone sus propias preguntas primero en la cola cuando la red está ocupada: {credit} de crédito son unas {words} palabras de respuestas.</translation>
    </message>
    <message>
      <source>While it helps, this computer earns credit, which puts your own questions first in line when the network is busy.</source>
      <extracomment>credit.explain</extracomment>
      <translation>Mientras ayuda, este ordenador gana crédito, que pone sus propias preguntas primero en la cola cuando la red está ocupada.</translation>
    </message>
    <message>
      <source>The last 7 days</source>
      <extracomment>week.title</extracomment>
      <translation>Los últimos 7 días</translation>
    </message>
    <message>
      <source>Today</source>
      <extracomment>week.today</extracomment>
      <translation>Hoy</translation>
    </message>
    <message>
      <source>nothing written</source>
      <extracomment>week.nothing</extracomment>
      <translation>nada escrito</translation>
    </message>
    <message>
      <source>{words} words in {hours} hours</source>
      <extracomment>week.day</extracomment>
      <translation>{words} palabras en {hours} horas</translation>
    </message>
    <message>
      <source>{words} words in 1 hour</source>
      <extracomment>week.day.one</extracomment>
      <translation>{words} palabras en 1 hora</translation>
    </message>
    <message>
      <source>Nothing written this week yet.</source>
      <extracomment>week.empty</extracomment>
      <translation>Aún no se ha escrito nada esta semana.</translation>
    </message>
    <message>
      <source>{words} words in {hours} hours this week.</source>
      <extracomment>week.total</extracomment>
      <translation>{words} palabras en {hours} horas esta semana.</translation>
    </message>
    <message>
      <source>Show your name on the leaderboard (optional)</source>
      <extracomment>leaderboard.title</extracomment>
      <translation>Mostrar su nombre en la clasificación (opcional)</translation>
    </message>
    <message>
      <source>The network keeps a list of how much each computer has helped. Leave both empty to be listed by number only.</source>
      <extracomment>leaderboard.intro</extracomment>
      <translation>La red lleva una lista de cuánto ha ayudado cada ordenador. Deje ambos campos vacíos para aparecer solo con un número.</translation>
    </message>
    <message>
      <source>&amp;Your name:</source>
      <extracomment>leaderboard.name</extracomment>
      <translation>Su &amp;nombre:</translation>
    </message>
    <message>
      <source>Your name on the leaderboard</source>
      <extracomment>leaderboard.name.name</extracomment>
      <translation>Su nombre en la clasificación</translation>
    </message>
    <message>
      <source>such as Ada</source>
      <extracomment>leaderboard.name.hint</extracomment>
      <translation>por ejemplo, Ada</translation>
    </message>
    <message>
      <source>&amp;Team:</source>
      <extracomment>leaderboard.team</extracomment>
      <translation>&amp;Equipo:</translation>
    </message>
    <message>
      <source>Your team on the leaderboard</source>
      <extracomment>leaderboard.team.name</extracomment>
      <translation>Su equipo en la clasificación</translation>
    </message>
    <message>
      <source>such as Riverside Makers</source>
      <extracomment>leaderboard.team.hint</extracomment>
      <translation>por ejemplo, Riverside Makers</translation>
    </message>
    <message>
      <source>Your name and team are on the network's leaderboard.</source>
      <extracomment>leaderboard.done</extracomment>
      <translation>Su nombre y su equipo están en la clasificación de la red.</translation>
    </message>
    <message>
      <source>Your name and team are no longer on the leaderboard.</source>
      <extracomment>leaderboard.cleared</extracomment>
      <translation>Su nombre y su equipo ya no están en la clasificación.</translation>
    </message>
    <message>
      <source>The network did not accept your name for the leaderboard. MeshNet asks again the next time this computer connects.</source>
      <extracomment>leaderboard.refused</extracomment>
      <translation>La red no aceptó su nombre para la clasificación. MeshNet lo vuelve a pedir la próxima vez que este ordenador se conecte.</translation>
    </message>
    <message>
      <source>MeshNet could not reach the network to put your name on the leaderboard. It tries again the next time this computer connects.</source>
      <extracomment>leaderboard.unreachable</extracomment>
      <translation>MeshNet no pudo contactar con la red para poner su nombre en la clasificación. Lo vuelve a intentar la próxima vez que este ordenador se conecte.</translation>
    </message>
    <message>
      <source>Contributing again</source>
      <extracomment>notify.contributing.again</extracomment>
      <translation>Colaborando de nuevo</translation>
    </message>
    <message>
      <source>This computer is helping the network answer questions.</source>
      <extracomment>notify.contributing.text</extracomment>
      <translation>Este ordenador ayuda a la red a responder preguntas.</translation>
    </message>
    <message>
      <source>Contribution paused</source>
      <extracomment>notify.paused</extracomment>
      <translation>Colaboración en pausa</translation>
    </message>
    <message>
      <source>Ready to answer</source>
      <extracomment>notify.ready, serves.ready</extracomment>
      <translation>Listo para responder</translation>
    </message>
    <message>
      <source>The network can now answer questions with {model}, with this computer's help.</source>
      <extracomment>notify.ready.text</extracomment>
      <translation>La red ya puede responder preguntas con {model}, con la ayuda de este ordenador.</translation>
    </message>
    <message>
      <source>Join a network</source>
      <extracomment>join.title, join.one</extracomment>
      <translation>Unirse a una red</translation>
    </message>
    <message>
      <source>A network is a group of computers that answer questions together. Paste the invite you were sent to see who runs it before you join.</source>
      <extracomment>join.subtitle</extracomment>
      <translation>Una red es un grupo de ordenadores que responden preguntas juntos. Pegue su invitación para ver quién la gestiona.</translation>
    </message>
    <message>
      <source>&amp;Invite link:</source>
      <extracomment>join.link</extracomment>
      <translation>Enlace de &amp;invitación:</translation>
    </message>
    <message>
      <source>Invite link</source>
      <extracomment>join.link.name</extracomment>
      <translation>Enlace de invitación</translation>
    </message>
    <message>
      <source>Show network</source>
      <extracomment>join.show</extracomment>
      <translation>Mostrar la red</translation>
    </message>
    <message>
      <source>Show the network this invite is for</source>
      <extracomment>join.show.name</extracomment>
      <translation>Mostrar la red de esta invitación</translation>
    </message>
    <message>
      <source>I run my own tracker (Advanced)</source>
      <extracomment>join.advanced</extracomment>
      <translation>Tengo mi propio tracker (Avanzado)</translation>
    </message>
    <message>
      <source>I run my own tracker</source>
      <extracomment>join.advanced.name</extracomment>
      <translation>Tengo mi propio tracker</translation>
    </message>
    <message>
      <source>Network &amp;address:</source>
      <extracomment>join.address</extracomment>
      <translation>&amp;Dirección de la red:</translation>
    </message>
    <message>
      <source>Invite &amp;code:</source>
      <extracomment>join.code</extracomment>
      <translation>&amp;Código de invitación:</translation>
    </message>
    <message>
      <source>Join this network</source>
      <extracomment>join.join</extracomment>
      <translation>Unirse a esta red</translation>
    </message>
    <message>
      <source>This computer uses your own tracker at {url} (Settings, Advanced). Press Next to continue, or join a network.</source>
      <extracomment>join.own</extracomment>
      <translation>Este ordenador usa su propio tracker en {url} (Ajustes, Avanzado). Pulse «Siguiente» para continuar, o únase a una red.</translation>
    </message>
    <message>
      <source>This computer is part of {network}. Press Next to continue, or join another network.</source>
      <extracomment>join.part-of</extracomment>
      <translation>Este ordenador forma parte de {network}. Pulse «Siguiente» para continuar, o únase a otra red.</translation>
    </message>
    <message>
      <source>Run by {operator}</source>
      <extracomment>join.run-by</extracomment>
      <translation>Gestionada por {operator}</translation>
    </message>
    <message>
      <source>The organiser gave no name.</source>
      <extracomment>join.no-operator</extracomment>
      <translation>El organizador no dio ningún nombre.</translation>
    </message>
    <message>
      <source>Answers questions with: {models}</source>
      <extracomment>join.serves</extracomment>
      <translation>Responde preguntas con: {models}</translation>
    </message>
    <message>
      <source>Joining lets this computer help answer questions for this network while you are not using it. You can pause or leave at any time.</source>
      <extracomment>join.explain</extracomment>
      <translation>Al unirse, este ordenador ayuda a esta red a responder preguntas mientras usted no lo usa. Puede pausar o salir cuando quiera.</translation>
    </message>
    <message>
      <source>Type the network's address and the invite code.</source>
      <extracomment>join.type-both</extracomment>
      <translation>Escriba la dirección de la red y el código de invitación.</translation>
    </message>
    <message>
      <source>Paste the invite link you were sent.</source>
      <extracomment>join.paste</extracomment>
      <translation>Pegue el enlace de invitación que recibió.</translation>
    </message>
    <message>
      <source>Looking up the network…</source>
      <extracomment>join.looking</extracomment>
      <translation>Buscando la red…</translation>
    </message>
    <message>
      <source>Joining {network}…</source>
      <extracomment>join.joining</extracomment>
      <translation>Uniéndose a {network}…</translation>
    </message>
    <message>
      <source>the network</source>
      <extracomment>join.the-network</extracomment>
      <translation>la red</translation>
    </message>
    <message>
      <source>You joined {network}. Press Next to check this computer.</source>
      <extracomment>join.joined</extracomment>
      <translation>Se ha unido a {network}. Pulse «Siguiente» para comprobar este ordenador.</translation>
    </message>
    <message>
      <source>{name} (run by {operator})</source>
      <extracomment>join.network-by</extracomment>
      <translation>{name} (gestionada por {operator})</translation>
    </message>
    <message>
      <source>MeshNet — check this computer</source>
      <extracomment>wizard.title</extracomment>
      <translation>MeshNet — comprobar este ordenador</translation>
    </message>
    <message>
      <source>Finish</source>
      <extracomment>wizard.finish</extracomment>
      <translation>Finalizar</translation>
    </message>
    <message>
      <source>Check this computer</source>
      <extracomment>welcome.title</extracomment>
      <translation>Comprobar este ordenador</translation>
    </message>
    <message>
      <source>MeshNet lets this computer help answer questions for the network while you are not using it.</source>
      <extracomment>welcome.one</extracomment>
      <translation>MeshNet permite que este ordenador ayude a la red a responder preguntas mientras usted no lo usa.</translation>
    </message>
    <message>
      <source>This check looks at your computer, gets the model if it is not here yet, and runs a real test. It takes a few minutes and you can stop it at any time.</source>
      <extracomment>welcome.two</extracomment>
      <translation>Esta comprobación examina su ordenador, descarga el modelo si aún no está y hace una prueba real. Tarda unos minutos y puede detenerla en cualquier momento.</translation>
    </message>
    <message>
      <source>Your computer</source>
      <extracomment>hardware.title</extracomment>
      <translation>Su ordenador</translation>
    </message>
    <message>
      <source>Cancel check</source>
      <extracomment>hardware.cancel</extracomment>
      <translation>Cancelar comprobación</translation>
    </message>
    <message>
      <source>Looking at this computer…</source>
      <extracomment>hardware.looking</extracomment>
      <translation>Examinando este ordenador…</translation>
    </message>
    <message>
      <source>&amp;Graphics card:</source>
      <extracomment>hardware.device</extracomment>
      <translation>&amp;Tarjeta gráfica:</translation>
    </message>
    <message>
      <source>&amp;Memory:</source>
      <extracomment>hardware.memory</extracomment>
      <translation>&amp;Memoria:</translation>
    </message>
    <message>
      <source>&amp;Free disk:</source>
      <extracomment>hardware.disk</extracomment>
      <translation>&amp;Disco libre:</translation>
    </message>
    <message>
      <source>Mo&amp;del:</source>
      <extracomment>hardware.model</extracomment>
      <translation>Mo&amp;delo:</translation>
    </message>
    <message>
      <source>{name}, graphics card: {free} free of {total}</source>
      <extracomment>hardware.gpu</extracomment>
      <translation>{name}, tarjeta gráfica: {free} libres de {total}</translation>
    </message>
    <message>
      <source>{name}, processor (no graphics card found): {free} free of {total}</source>
      <extracomment>hardware.cpu</extracomment>
      <translation>{name}, procesador (no se encontró tarjeta gráfica): {free} libres de {total}</translation>
    </message>
    <message>
      <source>{free} available of {total}</source>
      <extracomment>hardware.ram</extracomment>
      <translation>{free} disponibles de {total}</translation>
    </message>
    <message>
      <source>{free} free for models</source>
      <extracomment>hardware.disk.free</extracomment>
      <translation>{free} libres para modelos</translation>
    </message>
    <message>
      <source>{model}, already on this computer</source>
      <extracomment>hardware.model.here</extracomment>
      <translation>{model}, ya está en este ordenador</translation>
    </message>
    <message>
      <source>{model}, fetched in the next step</source>
      <extracomment>hardware.model.missing</extracomment>
      <translation>{model}, se descarga en el siguiente paso</translation>
    </message>
    <message>
      <source>This is what MeshNet found. Next: choose how much of this computer to use.</source>
      <extracomment>hardware.done</extracomment>
      <translation>Esto es lo que encontró MeshNet. Siguiente: elija cuánto de este ordenador usar.</translation>
    </message>
    <message>
      <source>The check of this computer did not finish. Try again, or open Settings.</source>
      <extracomment>hardware.failed</extracomment>
      <translation>La comprobación de este ordenador no terminó. Inténtelo de nuevo o abra los ajustes.</translation>
    </message>
    <message>
      <source>How much of this computer to use</source>
      <extracomment>memory.title</extracomment>
      <translation>Cuánto de este ordenador usar</translation>
    </message>
    <message>
      <source>MeshNet uses only the share you choose, so there is room left for games and other programs. The network decides which part of the model this computer holds.</source>
      <extracomment>memory.intro</extracomment>
      <translation>MeshNet usa solo la parte que usted elija, para que quede sitio para juegos y otros programas. La red decide qué parte del modelo lleva este ordenador.</translation>
    </message>
    <message>
      <source>Use up to:</source>
      <extracomment>memory.gpu</extracomment>
      <translation>Usar como máximo:</translation>
    </message>
    <message>
      <source>&amp;A little of my graphics memory (about {size})</source>
      <extracomment>memory.little</extracomment>
      <translation>&amp;Un poco de mi memoria gráfica (unos {size})</translation>
    </message>
    <message>
      <source>&amp;Half of my graphics memory (about {size}) — room for games</source>
      <extracomment>memory.half</extracomment>
      <translation>La &amp;mitad de mi memoria gráfica (unos {size}) — sitio para juegos</translation>
    </message>
    <message>
      <source>M&amp;ost of my graphics memory (about {size})</source>
      <extracomment>memory.most</extracomment>
      <translation>La mayor &amp;parte de mi memoria gráfica (unos {size})</translation>
    </message>
    <message>
      <source>&amp;A little of my memory (about {size})</source>
      <extracomment>memory.little.cpu</extracomment>
      <translation>&amp;Un poco de mi memoria (unos {size})</translation>
    </message>
    <message>
      <source>&amp;Half of my memory (about {size})</source>
      <extracomment>memory.half.cpu</extracomment>
      <translation>La &amp;mitad de mi memoria (unos {size})</translation>
    </message>
    <message>
      <source>M&amp;ost of my memory (about {size})</source>
      <extracomment>memory.most.cpu</extracomment>
      <translation>La mayor &amp;parte de mi memoria (unos {size})</translation>
    </message>
    <message>
      <source>That is too little memory for this network's model; choose more.</source>
      <extracomment>memory.too-little</extracomment>
      <translation>Es muy poca memoria para el modelo de esta red; elija más.</translation>
    </message>
    <message>
      <source>With this choice this computer can hold the whole model.</source>
      <extracomment>memory.holds.all</extracomment>
      <translation>Con esta opción este ordenador puede llevar el modelo entero.</translation>
    </message>
    <message>
      <source>With this choice this computer holds part of the model; other computers hold the rest.</source>
      <extracomment>memory.holds.part</extracomment>
      <translation>Con esta opción este ordenador lleva una parte del modelo; otros ordenadores llevan el resto.</translation>
    </message>
    <message>
      <source>Asking the network which part it needs most…</source>
      <extracomment>memory.asking</extracomment>
      <translation>Preguntando a la red qué parte necesita más…</translation>
    </message>
    <message>
      <source>The network chose the part it needs most.</source>
      <extracomment>memory.network</extracomment>
      <translation>La red eligió la parte que más necesita.</translation>
    </message>
    <message>
      <source>The network did not answer, so MeshNet chose a part that fits this computer.</source>
      <extracomment>memory.network.failed</extracomment>
      <translation>La red no respondió, así que MeshNet eligió una parte que cabe en este ordenador.</translation>
    </message>
    <message>
      <source>Cancel</source>
      <extracomment>child.cancel</extracomment>
      <translation>Cancelar</translation>
    </message>
    <message>
      <source>&amp;Try again</source>
      <extracomment>child.retry</extracomment>
      <translation>&amp;Intentar de nuevo</translation>
    </message>
    <message>
      <source>Stopping…</source>
      <extracomment>child.stopping</extracomment>
      <translation>Deteniendo…</translation>
    </message>
    <message>
      <source>Stopped. Nothing was changed on this computer.</source>
      <extracomment>child.stopped</extracomment>
      <translation>Detenido. No se cambió nada en este ordenador.</translation>
    </message>
    <message>
      <source>Getting the model</source>
      <extracomment>import.title</extracomment>
      <translation>Obteniendo el modelo</translation>
    </message>
    <message>
      <source>Cancel download</source>
      <extracomment>import.cancel</extracomment>
      <translation>Cancelar descarga</translation>
    </message>
    <message>
      <source>Preparing the model for this computer…</source>
      <extracomment>import.preparing, event.progress.import</extracomment>
      <translation>Preparando el modelo para este ordenador…</translation>
    </message>
    <message>
      <source>The model could not be prepared. Check the free disk space, then try again.</source>
      <extracomment>import.failed</extracomment>
      <translation>No se pudo preparar el modelo. Compruebe el espacio libre en disco e inténtelo de nuevo.</translation>
    </message>
    <message>
      <source>The model is ready on this computer. Next: the test.</source>
      <extracomment>import.ready</extracomment>
      <translation>El modelo está listo en este ordenador. Siguiente: la prueba.</translation>
    </message>
    <message>
      <source>Cancelled. Nothing was saved; you can try again whenever you like.</source>
      <extracomment>import.cancelled</extracomment>
      <translation>Cancelado. No se guardó nada; puede intentarlo de nuevo cuando quiera.</translation>
    </message>
    <message>
      <source>Cancel test</source>
      <extracomment>test.cancel</extracomment>
      <translation>Cancelar prueba</translation>
    </message>
    <message>
      <source>Loading the model and running a real test with it…</source>
      <extracomment>test.running</extracomment>
      <translation>Cargando el modelo y haciendo una prueba real con él…</translation>
    </message>
    <message>
      <source>The test has finished.</source>
      <extracomment>test.finished</extracomment>
      <translation>La prueba ha terminado.</translation>
    </message>
    <message>
      <source>Test cancelled. Nothing was saved; try again when you are ready.</source>
      <extracomment>test.cancelled</extracomment>
      <translation>Prueba cancelada. No se guardó nada; inténtelo de nuevo cuando esté listo.</translation>
    </message>
    <message>
      <source>Test result</source>
      <extracomment>result.title</extracomment>
      <translation>Resultado de la prueba</translation>
    </message>
    <message>
      <source>Passed: this computer is ready to contribute.</source>
      <extracomment>result.passed</extracomment>
      <translation>Superada: este ordenador está listo para colaborar.</translation>
    </message>
    <message>
      <source>It answered at about {speed} words per second.</source>
      <extracomment>result.speed</extracomment>
      <translation>Respondió a unas {speed} palabras por segundo.</translation>
    </message>
    <message>
      <source>It gave correct answers.</source>
      <extracomment>result.speed.none</extracomment>
      <translation>Dio respuestas correctas.</translation>
    </message>
    <message>
      <source>Finish saves this and, with the box ticked, starts contributing.</source>
      <extracomment>result.finish</extracomment>
      <translation>«Finalizar» guarda esto y, con la casilla marcada, empieza a colaborar.</translation>
    </message>
    <message>
      <source>Contribute is already on; it uses this the next time it starts.</source>
      <extracomment>result.running</extracomment>
      <translation>Colaborar ya está activado; usará esto la próxima vez que empiece.</translation>
    </message>
    <message>
      <source>&amp;Start contributing now</source>
      <extracomment>result.start</extracomment>
      <translation>&amp;Empezar a colaborar ahora</translation>
    </message>
    <message>
      <source>The test did not pass.</source>
      <extracomment>result.failed</extracomment>
      <translation>La prueba no se superó.</translation>
    </message>
    <message>
      <source>The test stopped without saying why.</source>
      <extracomment>result.failed.why</extracomment>
      <translation>La prueba se detuvo sin decir por qué.</translation>
    </message>
    <message>
      <source>What to do: go back and choose to use more of this computer's memory, or close other programs, then test again. Nothing was changed.</source>
      <extracomment>result.failed.advice</extracomment>
      <translation>Qué hacer: vuelva atrás y elija usar más memoria de este ordenador, o cierre otros programas, y pruebe de nuevo. No se cambió nada.</translation>
    </message>
    <message>
      <source>Choose how much &amp;memory to use</source>
      <extracomment>result.back</extracomment>
      <translation>Elegir cuánta &amp;memoria usar</translation>
    </message>
    <message>
      <source>Show &amp;details</source>
      <extracomment>result.details</extracomment>
      <translation>Mostrar &amp;detalles</translation>
    </message>
    <message>
      <source>Hide &amp;details</source>
      <extracomment>result.details.hide</extracomment>
      <translation>Ocultar &amp;detalles</translation>
    </message>
    <message>
      <source>The models this network answers questions with, and how many computers help with each.</source>
      <extracomment>serves.intro</extracomment>
      <translation>Los modelos con los que esta red responde preguntas, y cuántos ordenadores ayudan con cada uno.</translation>
    </message>
    <message>
      <source>Not ready yet: it needs more computers</source>
      <extracomment>serves.not-ready</extracomment>
      <translation>Aún no está listo: necesita más ordenadores</translation>
    </message>
    <message>
      <source>{count} computers help</source>
      <extracomment>serves.computers</extracomment>
      <translation>{count} ordenadores ayudan</translation>
    </message>
    <message>
      <source>1 computer helps</source>
      <extracomment>serves.computer</extracomment>
      <translation>1 ordenador ayuda</translation>
    </message>
    <message>
      <source>This network has not said what it serves yet.</source>
      <extracomment>serves.none</extracomment>
      <translation>Esta red aún no ha dicho qué ofrece.</translation>
    </message>
    <message>
      <source>MeshNet could not ask the network: {sentence}</source>
      <extracomment>serves.failed</extracomment>
      <translation>MeshNet no pudo preguntar a la red: {sentence}</translation>
    </message>
    <message>
      <source>Asking the network…</source>
      <extracomment>serves.loading</extracomment>
      <translation>Preguntando a la red…</translation>
    </message>
    <message>
      <source>&amp;Refresh</source>
      <extracomment>serves.refresh</extracomment>
      <translation>&amp;Actualizar</translation>
    </message>
    <message>
      <source>&amp;Close</source>
      <extracomment>serves.close</extracomment>
      <translation>&amp;Cerrar</translation>
    </message>
    <message>
      <source>Contributing: no pause rule applies</source>
      <extracomment>pause.none</extracomment>
      <translation>Contribuyendo: no se aplica ninguna regla de pausa</translation>
    </message>
    <message>
      <source>Paused while {name} runs</source>
      <extracomment>pause.program</extracomment>
      <translation>En pausa mientras se ejecuta {name}</translation>
    </message>
    <message>
      <source>Paused while {names} and {last} run</source>
      <extracomment>pause.programs</extracomment>
      <translation>En pausa mientras se ejecutan {names} y {last}</translation>
    </message>
    <message>
      <source>Paused: the graphics card is busy with another program</source>
      <extracomment>pause.gpu-busy</extracomment>
      <translation>En pausa: la tarjeta gráfica está ocupada con otro programa</translation>
    </message>
    <message>
      <source>Paused: running on battery</source>
      <extracomment>pause.battery</extracomment>
      <translation>En pausa: funcionando con batería</translation>
    </message>
    <message>
      <source>Paused: graphics card at {temp} °C (limit {limit} °C)</source>
      <extracomment>pause.gpu-hot</extracomment>
      <translation>En pausa: tarjeta gráfica a {temp} °C (límite {limit} °C)</translation>
    </message>
    <message>
      <source>Waiting until this computer has been idle for {minutes} minutes</source>
      <extracomment>pause.idle</extracomment>
      <translation>Esperando a que este ordenador lleve {minutes} minutos sin usarse</translation>
    </message>
    <message>
      <source>Waiting until this computer has been idle for 1 minute</source>
      <extracomment>pause.idle.one</extracomment>
      <translation>Esperando a que este ordenador lleve 1 minuto sin usarse</translation>
    </message>
    <message>
      <source>Resuming soon: no pause rule applies any more</source>
      <extracomment>pause.resuming</extracomment>
      <translation>Se reanuda pronto: ya no se aplica ninguna regla de pausa</translation>
    </message>
    <message>
      <source>Paused at your request until {until}.</source>
      <extracomment>pause.hour</extracomment>
      <translation>En pausa a petición suya hasta las {until}.</translation>
    </message>
    <message>
      <source>Paused at your request until you resume.</source>
      <extracomment>pause.until-resume</extracomment>
      <translation>En pausa a petición suya hasta que usted reanude.</translation>
    </message>
    <message>
      <source>Paused at your request until this computer restarts.</source>
      <extracomment>pause.until-restart</extracomment>
      <translation>En pausa a petición suya hasta que este ordenador se reinicie.</translation>
    </message>
    <message>
      <source>This computer is not part of a network, so there is nothing to leave.</source>
      <extracomment>leave.none</extracomment>
      <translation>Este ordenador no forma parte de ninguna red, así que no hay nada que abandonar.</translation>
    </message>
    <message>
      <source>Leave {name}? This computer stops contributing to it and forgets its invite.</source>
      <extracomment>leave.confirm</extracomment>
      <translation>¿Salir de {name}? Este ordenador deja de contribuir a ella y olvida su invitación.</translation>
    </message>
    <message>
      <source>You left {name}. Kept on this computer: its key, your settings and the record of what it contributed. Join a network again with an invite.</source>
      <extracomment>leave.done</extracomment>
      <translation>Ha salido de {name}. Se conservan en este ordenador: su clave, sus ajustes y el registro de lo que aportó. Únase de nuevo a una red con una invitación.</translation>
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
      <translation>{days} d {hours} h</translation>
    </message>
    <message>
      <source>Something went wrong inside MeshNet. Your contribution settings are safe; try again, and if it keeps happening use {copy} in the Status window.</source>
      <extracomment>apology</extracomment>
      <translation>Algo salió mal dentro de MeshNet. Sus ajustes de colaboración están a salvo; inténtelo de nuevo y, si vuelve a ocurrir, use «{copy}» en la ventana de estado.</translation>
    </message>
    <message>
      <source>The details are in {path}.</source>
      <extracomment>apology.where</extracomment>
      <translation>Los detalles están en {path}.</translation>
    </message>
    <message>
      <source>Your settings need a change before contributing: {sentence}</source>
      <extracomment>settings.need-change</extracomment>
      <translation>Sus ajustes necesitan un cambio antes de colaborar: {sentence}</translation>
    </message>
    <message>
      <source>The test could not run.</source>
      <extracomment>test.could-not-run</extracomment>
      <translation>La prueba no se pudo ejecutar.</translation>
    </message>
    <message>
      <source>This invite has already been used as many times as it allows. Ask the person who invited you for a new one.</source>
      <extracomment>join.refused.invite-used-up</extracomment>
      <translation>Esta invitación ya se ha usado tantas veces como permite. Pida una nueva a la persona que le invitó.</translation>
    </message>
    <message>
      <source>This invite has expired. Ask the person who invited you for a new one.</source>
      <extracomment>join.refused.invite-expired</extracomment>
      <translation>Esta invitación ha caducado. Pida una nueva a la persona que le invitó.</translation>
    </message>
    <message>
      <source>This invite was withdrawn by the network's organiser. Ask them for a new one.</source>
      <extracomment>join.refused.invite-revoked</extracomment>
      <translation>El organizador de la red retiró esta invitación. Pídale una nueva.</translation>
    </message>
    <message>
      <source>This network does not know that invite. Check that you copied all of it, or ask for a new one.</source>
      <extracomment>join.refused.invite-unknown</extracomment>
      <translation>Esta red no conoce esa invitación. Compruebe que la copió entera, o pida una nueva.</translation>
    </message>
    <message>
      <source>This link does not lead to the network it was made for, so nothing was sent. Ask the person who invited you for a fresh link.</source>
      <extracomment>join.refused.tracker-key-mismatch</extracomment>
      <translation>Este enlace no lleva a la red para la que se hizo, así que no se envió nada. Pida un enlace nuevo a la persona que le invitó.</translation>
    </message>
    <message>
      <source>The network's answer could not be trusted, so nothing was saved. Try again later, or ask for a fresh link.</source>
      <extracomment>join.refused.bad-tracker-answer</extracomment>
      <translation>No se pudo confiar en la respuesta de la red, así que no se guardó nada. Inténtelo más tarde, o pida un enlace nuevo.</translation>
    </message>
    <message>
      <source>That is not a whole invite link. Copy all of it: it starts with meshnet://join?</source>
      <extracomment>join.refused.bad-invite-link</extracomment>
      <translation>Eso no es un enlace de invitación completo. Cópielo entero: empieza por meshnet://join?</translation>
    </message>
    <message>
      <source>Type the network's address as its organiser gave it, starting with https:// or http://.</source>
      <extracomment>join.refused.bad-network-address</extracomment>
      <translation>Escriba la dirección de la red tal como se la dio su organizador, empezando por https:// o http://.</translation>
    </message>
    <message>
      <source>Type the invite code as you were given it (letters, digits and dashes).</source>
      <extracomment>join.refused.bad-invite-code</extracomment>
      <translation>Escriba el código de invitación tal como se lo dieron (letras, cifras y guiones).</translation>
    </message>
    <message>
      <source>The network could not be reached. Check this computer is online and try again.</source>
      <extracomment>join.refused.tracker-unreachable</extracomment>
      <translation>No se pudo llegar a la red. Compruebe que este ordenador tiene conexión e inténtelo de nuevo.</translation>
    </message>
    <message>
      <source>This computer has not joined a network yet. Paste the invite you were sent on the Join a network page (Check this computer…), then press Contribute again.</source>
      <extracomment>join.none-yet</extracomment>
      <translation>Este ordenador aún no se ha unido a ninguna red. Pegue la invitación que recibió en la página «Unirse a una red» (Comprobar este ordenador…) y pulse de nuevo «Colaborar».</translation>
    </message>
    <message>
      <source>{size} GB</source>
      <extracomment>size.gb</extracomment>
      <translation>{size} GB</translation>
    </message>
    <message>
      <source>unknown</source>
      <extracomment>size.unknown</extracomment>
      <translation>desconocido</translation>
    </message>
    <message>
      <source>{value}%</source>
      <extracomment>percent</extracomment>
      <translation>{value} %</translation>
    </message>
    <message>
      <source>Downloading the model…</source>
      <extracomment>event.progress.fetch</extracomment>
      <translation>Descargando el modelo…</translation>
    </message>
    <message>
      <source>Loading the model…</source>
      <extracomment>event.progress.load</extracomment>
      <translation>Cargando el modelo…</translation>
    </message>
    <message>
      <source>Testing this computer…</source>
      <extracomment>event.progress.probe</extracomment>
      <translation>Probando este ordenador…</translation>
    </message>
    <message>
      <source>{sentence} {percent}</source>
      <extracomment>event.progress.count</extracomment>
      <translation>{sentence} {percent}</translation>
    </message>
    <message>
      <source>Advanced</source>
      <extracomment>settings.tab.advanced</extracomment>
      <translation>Avanzado</translation>
    </message>
    <message>
      <source>MeshNet found this graphics card when it checked this computer.</source>
      <extracomment>settings.card.found</extracomment>
      <translation>MeshNet encontró esta tarjeta gráfica al comprobar este ordenador.</translation>
    </message>
    <message>
      <source>Check this computer to list its graphics card here.</source>
      <extracomment>settings.card.none</extracomment>
      <translation>Compruebe este ordenador para que su tarjeta gráfica aparezca aquí.</translation>
    </message>
    <message>
      <source>Chosen on the Advanced page: {device}.</source>
      <extracomment>settings.card.advanced</extracomment>
      <translation>Elegido en la página Avanzado: {device}.</translation>
    </message>
    <message>
      <source> GB</source>
      <extracomment>settings.memory.unit</extracomment>
      <translation> GB</translation>
    </message>
    <message>
      <source>The most memory MeshNet may use; the rest stays free for games and other programs.</source>
      <extracomment>settings.memory.hint</extracomment>
      <translation>La memoria máxima que MeshNet puede usar; el resto queda libre para juegos y otros programas.</translation>
    </message>
    <message>
      <source>{size} is too little memory for MeshNet: choose at least {least}, or No limit.</source>
      <extracomment>problem.memory.gb</extracomment>
      <translation>{size} es muy poca memoria para MeshNet: elija al menos {least}, o Sin límite.</translation>
    </message>
    <message>
      <source>← Back</source>
      <extracomment>details.back</extracomment>
      <translation>← Atrás</translation>
    </message>
    <message>
      <source>Back to the status</source>
      <extracomment>details.back.name</extracomment>
      <translation>Volver al estado</translation>
    </message>
    <message>
      <source>Admission, step by step</source>
      <extracomment>details.title</extracomment>
      <translation>Admisión, paso a paso</translation>
    </message>
    <message>
      <source>tokens served</source>
      <extracomment>details.tokens</extracomment>
      <translation>tokens servidos</translation>
    </message>
    <message>
      <source>open sessions</source>
      <extracomment>details.sessions</extracomment>
      <translation>sesiones abiertas</translation>
    </message>
    <message>
      <source>Tokens served, last 7 days</source>
      <extracomment>details.chart</extracomment>
      <translation>Tokens servidos, últimos 7 días</translation>
    </message>
    <message>
      <source>Tokens served per hour over the last week</source>
      <extracomment>details.chart.name</extracomment>
      <translation>Tokens servidos por hora durante la última semana</translation>
    </message>
    <message>
      <source>{total} tokens served in the last 7 days; busiest hour {when} ({best} tokens).</source>
      <extracomment>details.chart.summary</extracomment>
      <translation>{total} tokens servidos en los últimos 7 días; hora de más trabajo {when} ({best} tokens).</translation>
    </message>
    <message>
      <source>No tokens served in the last 7 days yet.</source>
      <extracomment>details.chart.nothing</extracomment>
      <translation>Aún no se han servido tokens en los últimos 7 días.</translation>
    </message>
    <message>
      <source>This chart fills in while this computer contributes.</source>
      <extracomment>details.chart.fills</extracomment>
      <translation>Este gráfico se va llenando mientras este ordenador colabora.</translation>
    </message>
    <message>
      <source>Node log</source>
      <extracomment>details.log</extracomment>
      <translation>Registro del nodo</translation>
    </message>
    <message>
      <source>The node's messages appear here while it runs.</source>
      <extracomment>details.log.empty</extracomment>
      <translation>Los mensajes del nodo aparecen aquí mientras se ejecuta.</translation>
    </message>
    <message>
      <source>This computer has no keyring, so MeshNet keeps its key and its batch-job sign-in in files only you can read, in {folder}.</source>
      <extracomment>details.key-file.no-keyring</extracomment>
      <translation>Este ordenador no tiene llavero, así que MeshNet guarda su clave y el acceso a los trabajos por lotes en archivos que solo usted puede leer, en {folder}.</translation>
    </message>
    <message>
      <source>MeshNet keeps this computer's key in a file only you can read: {path}.</source>
      <extracomment>details.key-file</extracomment>
      <translation>MeshNet guarda la clave de este ordenador en un archivo que solo usted puede leer: {path}.</translation>
    </message>
    <message>
      <source>Copy diagnostics</source>
      <extracomment>details.copy</extracomment>
      <translation>Copiar diagnóstico</translation>
    </message>
    <message>
      <source>Copy the status, the gates, the report and the last log lines, to paste into a message to someone helping you</source>
      <extracomment>details.copy.tip</extracomment>
      <translation>Copiar el estado, los pasos de control, el informe y las últimas líneas del registro para pegarlos en un mensaje a quien le ayude</translation>
    </message>
    <message>
      <source>Diagnostics copied: paste them into your message.</source>
      <extracomment>details.copied</extracomment>
      <translation>Diagnóstico copiado: péguelo en su mensaje.</translation>
    </message>
    <message>
      <source>Reason code, for whoever helps you</source>
      <extracomment>details.reason.tip</extracomment>
      <translation>Código de motivo, para quien le ayude</translation>
    </message>
    <message>
      <source>Passed</source>
      <extracomment>gate-state.passed</extracomment>
      <translation>Superado</translation>
    </message>
    <message>
      <source>Failed</source>
      <extracomment>gate-state.failed</extracomment>
      <translation>Fallido</translation>
    </message>
    <message>
      <source>In progress</source>
      <extracomment>gate-state.pending</extracomment>
      <translation>En curso</translation>
    </message>
    <message>
      <source>For your information</source>
      <extracomment>gate-state.info</extracomment>
      <translation>Para su información</translation>
    </message>
    <message>
      <source>Not reached yet</source>
      <extracomment>gate-state.waiting</extracomment>
      <translation>Aún no alcanzado</translation>
    </message>
    <message>
      <source>Identity</source>
      <extracomment>gate.identity</extracomment>
      <translation>Identidad</translation>
    </message>
    <message>
      <source>Layers chosen</source>
      <extracomment>gate.placement</extracomment>
      <translation>Capas elegidas</translation>
    </message>
    <message>
      <source>Capability report</source>
      <extracomment>gate.capability</extracomment>
      <translation>Informe de capacidad</translation>
    </message>
    <message>
      <source>Admission</source>
      <extracomment>gate.admission</extracomment>
      <translation>Admisión</translation>
    </message>
    <message>
      <source>Data plane</source>
      <extracomment>gate.data-plane</extracomment>
      <translation>Plano de datos</translation>
    </message>
    <message>
      <source>Registration</source>
      <extracomment>gate.registration</extracomment>
      <translation>Registro</translation>
    </message>
    <message>
      <source>Reachability</source>
      <extracomment>gate.reachability</extracomment>
      <translation>Accesibilidad</translation>
    </message>
    <message>
      <source>Recipe</source>
      <extracomment>gate.recipe, recipes.column.recipe</extracomment>
      <translation>Receta</translation>
    </message>
    <message>
      <source>Sessions</source>
      <extracomment>gate.sessions</extracomment>
      <translation>Sesiones</translation>
    </message>
    <message>
      <source>Layers {start}–{end}, as set in Settings.</source>
      <extracomment>gate.placement.fixed</extracomment>
      <translation>Capas {start}–{end}, según los ajustes.</translation>
    </message>
    <message>
      <source>Not checked yet.</source>
      <extracomment>gate.not-checked</extracomment>
      <translation>Aún no comprobado.</translation>
    </message>
    <message>
      <source>Not reached.</source>
      <extracomment>gate.not-reached</extracomment>
      <translation>No alcanzado.</translation>
    </message>
    <message>
      <source>Report {age} old, stale in {left}.</source>
      <extracomment>gate.report.fresh</extracomment>
      <translation>Informe de hace {age}, caduca en {left}.</translation>
    </message>
    <message>
      <source>Report {age} old: stale; Retry tests this computer again.</source>
      <extracomment>gate.report.stale</extracomment>
      <translation>Informe de hace {age}: caducado; Reintentar vuelve a probar este ordenador.</translation>
    </message>
    <message>
      <source>MeshNet settings</source>
      <extracomment>settings.title</extracomment>
      <translation>Ajustes de MeshNet</translation>
    </message>
    <message>
      <source>Save</source>
      <extracomment>settings.save</extracomment>
      <translation>Guardar</translation>
    </message>
    <message>
      <source>Save anyway</source>
      <extracomment>settings.save-anyway</extracomment>
      <translation>Guardar de todos modos</translation>
    </message>
    <message>
      <source>This computer</source>
      <extracomment>settings.tab.computer</extracomment>
      <translation>Este ordenador</translation>
    </message>
    <message>
      <source>Pause rules</source>
      <extracomment>settings.tab.pause</extracomment>
      <translation>Reglas de pausa</translation>
    </message>
    <message>
      <source>Tracker address:</source>
      <extracomment>settings.url</extracomment>
      <translation>Dirección del tracker:</translation>
    </message>
    <message>
      <source>Tracker address</source>
      <extracomment>settings.url.name</extracomment>
      <translation>Dirección del tracker</translation>
    </message>
    <message>
      <source>Check</source>
      <extracomment>settings.check</extracomment>
      <translation>Comprobar</translation>
    </message>
    <message>
      <source>Checking {url}…</source>
      <extracomment>settings.checking</extracomment>
      <translation>Comprobando {url}…</translation>
    </message>
    <message>
      <source>The check failed unexpectedly (it is logged); try again.</source>
      <extracomment>settings.check.failed</extracomment>
      <translation>La comprobación falló inesperadamente (queda registrado); inténtelo de nuevo.</translation>
    </message>
    <message>
      <source>Join token:</source>
      <extracomment>settings.token</extracomment>
      <translation>Token de acceso:</translation>
    </message>
    <message>
      <source>No join token</source>
      <extracomment>settings.token.none</extracomment>
      <translation>Sin token de acceso</translation>
    </message>
    <message>
      <source>Show</source>
      <extracomment>settings.token.show</extracomment>
      <translation>Mostrar</translation>
    </message>
    <message>
      <source>Only for a private tracker; kept in this computer's keyring.</source>
      <extracomment>settings.token.note</extracomment>
      <translation>Solo para un tracker privado; se guarda en el llavero de este ordenador.</translation>
    </message>
    <message>
      <source>The join token was not kept: {error}.</source>
      <extracomment>settings.token.failed</extracomment>
      <translation>No se guardó el token de acceso: {error}.</translation>
    </message>
    <message>
      <source>This computer has not joined a network yet. Open Check this computer… and paste the invite you were sent.</source>
      <extracomment>settings.network.none</extracomment>
      <translation>Este ordenador aún no se ha unido a ninguna red. Abra «Comprobar este ordenador…» y pegue la invitación que recibió.</translation>
    </message>
    <message>
      <source>This computer is part of {network}. To join another network or leave this one, choose Join another network… or Leave this network… in MeshNet's menu.</source>
      <extracomment>settings.network</extracomment>
      <translation>Este ordenador forma parte de {network}. Para unirse a otra red o salir de esta, elija «Unirse a otra red…» o «Salir de esta red…» en el menú de MeshNet.</translation>
    </message>
    <message>
      <source>Device:</source>
      <extracomment>settings.device</extracomment>
      <translation>Dispositivo:</translation>
    </message>
    <message>
      <source>Identity key ready: {node}</source>
      <extracomment>event.gate.identity</extracomment>
      <translation>Clave de identidad lista: {node}</translation>
    </message>
    <message>
      <source>This computer computed layers {start}–{end} correctly at {speed} tokens/s.</source>
      <extracomment>event.gate.capability</extracomment>
      <translation>Este ordenador calculó las capas {start}–{end} correctamente a {speed} tokens/s.</translation>
    </message>
    <message>
      <source>Admitted: the report matches the loaded shard.</source>
      <extracomment>event.gate.admission</extracomment>
      <translation>Admitido: el informe coincide con el fragmento cargado.</translation>
    </message>
    <message>
      <source>Listening for other nodes at {endpoint}.</source>
      <extracomment>event.gate.data-plane</extracomment>
      <translation>Esperando a otros nodos en {endpoint}.</translation>
    </message>
    <message>
      <source>Registered with the tracker.</source>
      <extracomment>event.gate.registration</extracomment>
      <translation>Registrado en el tracker.</translation>
    </message>
    <message>
      <source>Other nodes can reach this computer.</source>
      <extracomment>event.gate.reachability</extracomment>
      <translation>Otros nodos pueden llegar a este ordenador.</translation>
    </message>
    <message>
      <source>Serving through a relay: the tracker could not reach this computer directly.</source>
      <extracomment>event.gate.relay</extracomment>
      <translation>Sirve a través de un relé: el tracker no pudo llegar directamente a este ordenador.</translation>
    </message>
    <message>
      <source>{sessions} open sessions, {tokens} tokens served.</source>
      <extracomment>event.gate.sessions</extracomment>
      <translation>{sessions} sesiones abiertas, {tokens} tokens servidos.</translation>
    </message>
    <message>
      <source>Empty: the card chosen on This computer; or cuda:1, mps, cpu</source>
      <extracomment>settings.device.own.hint</extracomment>
      <translation>Vacío: la tarjeta elegida en Este ordenador; o cuda:1, mps, cpu</translation>
    </message>
    <message>
      <source>Device, as the node names it</source>
      <extracomment>settings.device.own.name</extracomment>
      <translation>Dispositivo, como lo nombra el nodo</translation>
    </message>
    <message>
      <source>For people who run their own network or try other models. Most people need only the first two pages.</source>
      <extracomment>settings.advanced.intro</extracomment>
      <translation>Para quien gestiona su propia red o prueba otros modelos. A la mayoría le bastan las dos primeras páginas.</translation>
    </message>
    <message>
      <source>Best available</source>
      <extracomment>settings.device.best</extracomment>
      <translation>El mejor disponible</translation>
    </message>
    <message>
      <source>Processor (CPU)</source>
      <extracomment>settings.device.cpu</extracomment>
      <translation>Procesador (CPU)</translation>
    </message>
    <message>
      <source>NVIDIA graphics card</source>
      <extracomment>settings.device.nvidia</extracomment>
      <translation>Tarjeta gráfica NVIDIA</translation>
    </message>
    <message>
      <source>Apple graphics</source>
      <extracomment>settings.device.apple</extracomment>
      <translation>Gráficos de Apple</translation>
    </message>
    <message>
      <source>The graphics card is the one the doctor found; type cuda:1 for a second one.</source>
      <extracomment>settings.device.found</extracomment>
      <translation>La tarjeta gráfica es la que encontró el doctor; escriba cuda:1 para una segunda.</translation>
    </message>
    <message>
      <source>Run the doctor to list this computer's graphics card, or type one (cuda:0).</source>
      <extracomment>settings.device.none</extracomment>
      <translation>Ejecute el doctor para ver la tarjeta gráfica de este ordenador, o escriba una (cuda:0).</translation>
    </message>
    <message>
      <source>Model:</source>
      <extracomment>settings.model</extracomment>
      <translation>Modelo:</translation>
    </message>
    <message>
      <source>The default model (SmolLM2-135M-Instruct)</source>
      <extracomment>settings.model.default</extracomment>
      <translation>El modelo predeterminado (SmolLM2-135M-Instruct)</translation>
    </message>
    <message>
      <source>Choose folder…</source>
      <extracomment>settings.model.browse</extracomment>
      <translation>Elegir carpeta…</translation>
    </message>
    <message>
      <source>Choose a model folder</source>
      <extracomment>settings.model.choose</extracomment>
      <translation>Elija una carpeta de modelo</translation>
    </message>
    <message>
      <source>Download from Hugging Face…</source>
      <extracomment>settings.model.download</extracomment>
      <translation>Descargar de Hugging Face…</translation>
    </message>
    <message>
      <source>Download a model</source>
      <extracomment>hub.title</extracomment>
      <translation>Descargar un modelo</translation>
    </message>
    <message>
      <source>Type the name of a model on Hugging Face, as its address shows it after huggingface.co/, such as {example}. MeshNet downloads only the files it needs.</source>
      <extracomment>hub.intro</extracomment>
      <translation>Escriba el nombre de un modelo de Hugging Face tal como aparece en su dirección después de huggingface.co/, por ejemplo {example}. MeshNet descarga solo los archivos que necesita.</translation>
    </message>
    <message>
      <source>Model name:</source>
      <extracomment>hub.name</extracomment>
      <translation>Nombre del modelo:</translation>
    </message>
    <message>
      <source>Version:</source>
      <extracomment>hub.revision</extracomment>
      <translation>Versión:</translation>
    </message>
    <message>
      <source>main (the newest)</source>
      <extracomment>hub.revision.hint</extracomment>
      <translation>main (la más reciente)</translation>
    </message>
    <message>
      <source>A branch, tag or commit of the model; leave it empty for the newest.</source>
      <extracomment>hub.revision.tip</extracomment>
      <translation>Una rama, etiqueta o commit del modelo; déjelo vacío para la más reciente.</translation>
    </message>
    <message>
      <source>&amp;Download</source>
      <extracomment>hub.download</extracomment>
      <translation>&amp;Descargar</translation>
    </message>
    <message>
      <source>Close</source>
      <extracomment>hub.close</extracomment>
      <translation>Cerrar</translation>
    </message>
    <message>
      <source>Type the model's name as ORGANISATION/NAME, such as {example}: the part of its address after huggingface.co/.</source>
      <extracomment>hub.bad-name</extracomment>
      <translation>Escriba el nombre del modelo como ORGANIZACIÓN/NOMBRE, por ejemplo {example}: la parte de su dirección después de huggingface.co/.</translation>
    </message>
    <message>
      <source>A version has no spaces: type a branch, tag or commit, or leave the field empty for the newest.</source>
      <extracomment>hub.bad-revision</extracomment>
      <translation>Una versión no lleva espacios: escriba una rama, etiqueta o commit, o deje el campo vacío para la más reciente.</translation>
    </message>
    <message>
      <source>Looking up {repo} on Hugging Face…</source>
      <extracomment>hub.looking-up</extracomment>
      <translation>Buscando {repo} en Hugging Face…</translation>
    </message>
    <message>
      <source>Downloading {file}… {percent} %</source>
      <extracomment>hub.downloading-file</extracomment>
      <translation>Descargando {file}… {percent} %</translation>
    </message>
    <message>
      <source>Downloading the model… {percent} %</source>
      <extracomment>hub.downloading</extracomment>
      <translation>Descargando el modelo… {percent} %</translation>
    </message>
    <message>
      <source>Downloading {file}…</source>
      <extracomment>hub.fetching</extracomment>
      <translation>Descargando {file}…</translation>
    </message>
    <message>
      <source>Stopping the download…</source>
      <extracomment>hub.stopping</extracomment>
      <translation>Deteniendo la descarga…</translation>
    </message>
    <message>
      <source>Download cancelled. What arrived is kept, so downloading again continues where it stopped.</source>
      <extracomment>hub.cancelled</extracomment>
      <translation>Descarga cancelada. Lo que ya llegó se conserva, así que una nueva descarga sigue donde se detuvo.</translation>
    </message>
    <message>
      <source>The download did not finish. Check the internet connection and the free disk space, then try again.</source>
      <extracomment>hub.failed</extracomment>
      <translation>La descarga no terminó. Compruebe la conexión a internet y el espacio libre en disco e inténtelo de nuevo.</translation>
    </message>
    <message>
      <source>Hugging Face has no public model named {repo}. Check the spelling (copy the name from the model's page); a private or gated model needs a Hugging Face login on this computer first.</source>
      <extracomment>hub.error.repo-not-found</extracomment>
      <translation>Hugging Face no tiene ningún modelo público llamado {repo}. Compruebe cómo se escribe (copie el nombre de la página del modelo); un modelo privado o restringido necesita antes iniciar sesión en Hugging Face en este ordenador.</translation>
    </message>
    <message>
      <source>{repo} has no version {revision}. Leave the version empty for the newest, or copy a branch, tag or commit from the model's page.</source>
      <extracomment>hub.error.revision-not-found</extracomment>
      <translation>{repo} no tiene la versión {revision}. Deje la versión vacía para la más reciente, o copie una rama, etiqueta o commit de la página del modelo.</translation>
    </message>
    <message>
      <source>Hugging Face could not be reached. Check the internet connection, then try again; what arrived is kept.</source>
      <extracomment>hub.error.hub-unreachable</extracomment>
      <translation>No se pudo contactar con Hugging Face. Compruebe la conexión a internet e inténtelo de nuevo; lo que ya llegó se conserva.</translation>
    </message>
    <message>
      <source>Downloads are switched off on this computer (HF_HUB_OFFLINE is set). Remove that setting, restart MeshNet and try again.</source>
      <extracomment>hub.error.hub-offline</extracomment>
      <translation>Las descargas están desactivadas en este ordenador (HF_HUB_OFFLINE está definido). Quite ese ajuste, reinicie MeshNet e inténtelo de nuevo.</translation>
    </message>
    <message>
      <source>MeshNet cannot run this kind of model yet. Choose another one, such as a Llama, Qwen or Gemma model.</source>
      <extracomment>hub.error.unsupported-architecture</extracomment>
      <translation>MeshNet aún no puede ejecutar este tipo de modelo. Elija otro, por ejemplo un modelo Llama, Qwen o Gemma.</translation>
    </message>
    <message>
      <source>Layers:</source>
      <extracomment>settings.layers</extracomment>
      <translation>Capas:</translation>
    </message>
    <message>
      <source>Choose the layers myself (otherwise the doctor's suggestion)</source>
      <extracomment>settings.layers.own</extracomment>
      <translation>Elegir las capas yo mismo (si no, la sugerencia del doctor)</translation>
    </message>
    <message>
      <source>up to</source>
      <extracomment>settings.layers.up-to</extracomment>
      <translation>hasta</translation>
    </message>
    <message>
      <source>Memory limit:</source>
      <extracomment>settings.memory</extracomment>
      <translation>Límite de memoria:</translation>
    </message>
    <message>
      <source>No limit</source>
      <extracomment>settings.memory.none</extracomment>
      <translation>Sin límite</translation>
    </message>
    <message>
      <source>Start MeshNet when I log in</source>
      <extracomment>settings.login</extracomment>
      <translation>Iniciar MeshNet al iniciar sesión</translation>
    </message>
    <message>
      <source>Could not turn on start at login ({error}): check that your user may change its login items, then try again.</source>
      <extracomment>settings.login.on-failed</extracomment>
      <translation>No se pudo activar el inicio al iniciar sesión ({error}): compruebe que su usuario puede cambiar sus elementos de inicio y vuelva a intentarlo.</translation>
    </message>
    <message>
      <source>Could not turn off start at login ({error}): check that your user may change its login items, then try again.</source>
      <extracomment>settings.login.off-failed</extracomment>
      <translation>No se pudo desactivar el inicio al iniciar sesión ({error}): compruebe que su usuario puede cambiar sus elementos de inicio y vuelva a intentarlo.</translation>
    </message>
    <message>
      <source>Run batch jobs when not serving</source>
      <extracomment>settings.batch</extracomment>
      <translation>Ejecutar trabajos por lotes cuando no sirve</translation>
    </message>
    <message>
      <source>While this computer is not serving a model, run the tracker's batch jobs (quality checks, bulk generation) in a sandboxed helper process.</source>
      <extracomment>settings.batch.tip</extracomment>
      <translation>Mientras este ordenador no sirve ningún modelo, ejecutar los trabajos por lotes del tracker (controles de calidad, generación masiva) en un proceso auxiliar aislado.</translation>
    </message>
    <message>
      <source>Graphics card:</source>
      <extracomment>settings.gpu</extracomment>
      <translation>Tarjeta gráfica:</translation>
    </message>
    <message>
      <source>Pause while another program keeps the graphics card busy</source>
      <extracomment>settings.gpu.busy</extracomment>
      <translation>Pausar mientras otro programa mantenga ocupada la tarjeta gráfica</translation>
    </message>
    <message>
      <source>Pause when the graphics card is hotter than</source>
      <extracomment>settings.gpu.hot</extracomment>
      <translation>Pausar cuando la tarjeta gráfica supere</translation>
    </message>
    <message>
      <source>First layer</source>
      <extracomment>settings.layers.from.name</extracomment>
      <translation>Primera capa</translation>
    </message>
    <message>
      <source>Up to layer</source>
      <extracomment>settings.layers.up-to.name</extracomment>
      <translation>Hasta la capa</translation>
    </message>
    <message>
      <source>Minutes without keyboard or mouse before contributing</source>
      <extracomment>settings.idle.name</extracomment>
      <translation>Minutos sin teclado ni ratón antes de contribuir</translation>
    </message>
    <message>
      <source>Join token</source>
      <extracomment>settings.token.name</extracomment>
      <translation>Token de acceso</translation>
    </message>
    <message>
      <source>Program to add</source>
      <extracomment>settings.programs.name</extracomment>
      <translation>Programa que añadir</translation>
    </message>
    <message>
      <source>Programs that pause contributing</source>
      <extracomment>settings.programs.list.name</extracomment>
      <translation>Programas que pausan la contribución</translation>
    </message>
    <message>
      <source>MeshNet cannot read this computer's graphics card (it can read NVIDIA cards only), so these two rules never pause it. Use the list of programs below instead.</source>
      <extracomment>settings.gpu.unmeasured</extracomment>
      <translation>MeshNet no puede leer la tarjeta gráfica de este ordenador (solo lee tarjetas NVIDIA), así que estas dos reglas nunca lo pausan. Use en su lugar la lista de programas de abajo.</translation>
    </message>
    <message>
      <source>Programs:</source>
      <extracomment>settings.programs</extracomment>
      <translation>Programas:</translation>
    </message>
    <message>
      <source>Pause while any of these programs is running:</source>
      <extracomment>settings.programs.intro</extracomment>
      <translation>Pausar mientras se ejecute alguno de estos programas:</translation>
    </message>
    <message>
      <source>Program file name, such as eldenring.exe</source>
      <extracomment>settings.programs.hint</extracomment>
      <translation>Nombre del archivo del programa, como eldenring.exe</translation>
    </message>
    <message>
      <source>Add</source>
      <extracomment>settings.programs.add</extracomment>
      <translation>Añadir</translation>
    </message>
    <message>
      <source>Remove</source>
      <extracomment>settings.programs.remove</extracomment>
      <translation>Quitar</translation>
    </message>
    <message>
      <source>Power:</source>
      <extracomment>settings.power</extracomment>
      <translation>Energía:</translation>
    </message>
    <message>
      <source>Pause on battery power</source>
      <extracomment>settings.battery</extracomment>
      <translation>Pausar con batería</translation>
    </message>
    <message>
      <source>Idle:</source>
      <extracomment>settings.idle</extracomment>
      <translation>Inactividad:</translation>
    </message>
    <message>
      <source>Contribute only after</source>
      <extracomment>settings.idle.after</extracomment>
      <translation>Contribuir solo tras</translation>
    </message>
    <message>
      <source> minutes</source>
      <extracomment>settings.idle.minutes</extracomment>
      <translation> minutos</translation>
    </message>
    <message>
      <source>without keyboard or mouse use</source>
      <extracomment>settings.idle.untouched</extracomment>
      <translation>sin usar el teclado ni el ratón</translation>
    </message>
    <message>
      <source>Contributing resumes by itself once the reason has passed.</source>
      <extracomment>settings.resumes</extracomment>
      <translation>La contribución se reanuda sola cuando el motivo haya pasado.</translation>
    </message>
    <message>
      <source>Enter the tracker's address, such as http://127.0.0.1:8765.</source>
      <extracomment>problem.url.empty</extracomment>
      <translation>Escriba la dirección del tracker, por ejemplo http://127.0.0.1:8765.</translation>
    </message>
    <message>
      <source>The tracker address is not a valid URL: check it, such as http://127.0.0.1:8765.</source>
      <extracomment>problem.url.invalid</extracomment>
      <translation>La dirección del tracker no es una URL válida: revísela, por ejemplo http://127.0.0.1:8765.</translation>
    </message>
    <message>
      <source>The tracker address must start with http:// or https://.</source>
      <extracomment>problem.url.scheme</extracomment>
      <translation>La dirección del tracker debe empezar por http:// o https://.</translation>
    </message>
    <message>
      <source>The tracker address needs a host name, such as http://tracker.example.org.</source>
      <extracomment>problem.url.host</extracomment>
      <translation>La dirección del tracker necesita un nombre de host, por ejemplo http://tracker.example.org.</translation>
    </message>
    <message>
      <source>Remove the empty program name, or type the program's file name.</source>
      <extracomment>problem.program.empty</extracomment>
      <translation>Quite el nombre de programa vacío, o escriba el nombre de archivo del programa.</translation>
    </message>
    <message>
      <source>Enter only the program's file name, such as eldenring.exe, not a path: {name} contains a folder.</source>
      <extracomment>problem.program.path</extracomment>
      <translation>Escriba solo el nombre de archivo del programa, por ejemplo eldenring.exe, no una ruta: {name} contiene una carpeta.</translation>
    </message>
    <message>
      <source>Choose a model, or leave it empty to use the default model.</source>
      <extracomment>problem.model</extracomment>
      <translation>Elija un modelo, o déjelo vacío para usar el modelo predeterminado.</translation>
    </message>
    <message>
      <source>The first layer must be 0 or more: raise the first number.</source>
      <extracomment>problem.layers.start</extracomment>
      <translation>La primera capa debe ser 0 o más: suba el primer número.</translation>
    </message>
    <message>
      <source>Layers {start}–{end} is an empty range: make the last layer larger than the first, such as {start}–{next}.</source>
      <extracomment>problem.layers.empty</extracomment>
      <translation>Las capas {start}–{end} son un rango vacío: haga la última capa mayor que la primera, por ejemplo {start}–{next}.</translation>
    </message>
    <message>
      <source>Unknown device {device}: choose the CPU, a GPU (cuda:0, cuda:1, …) or mps.</source>
      <extracomment>problem.device</extracomment>
      <translation>Dispositivo desconocido {device}: elija la CPU, una GPU (cuda:0, cuda:1, …) o mps.</translation>
    </message>
    <message>
      <source>Choose a GPU temperature between {low} and {high} °C ({temp} °C is outside that range).</source>
      <extracomment>problem.gpu-temp</extracomment>
      <translation>Elija una temperatura de GPU entre {low} y {high} °C ({temp} °C está fuera de ese rango).</translation>
    </message>
    <message>
      <source>Choose between {low} and {high} idle minutes ({idle} is outside that range), or turn the idle rule off.</source>
      <extracomment>problem.idle</extracomment>
      <translation>Elija entre {low} y {high} minutos de inactividad ({idle} está fuera de ese rango), o desactive la regla de inactividad.</translation>
    </message>
    <message>
      <source>Use at most {count} letters, digits or signs on one line, or leave it empty.</source>
      <extracomment>problem.label</extracomment>
      <translation>Use como mucho {count} letras, cifras o signos en una línea, o déjelo vacío.</translation>
    </message>
    <message>
      <source>Connected to a MeshNet tracker: {nodes}, {recipes}.</source>
      <extracomment>tracker.connected</extracomment>
      <translation>Conectado a un tracker de MeshNet: {nodes}, {recipes}.</translation>
    </message>
    <message>
      <source>1 live node</source>
      <extracomment>tracker.nodes.one</extracomment>
      <translation>1 nodo activo</translation>
    </message>
    <message>
      <source>{count} live nodes</source>
      <extracomment>tracker.nodes</extracomment>
      <translation>{count} nodos activos</translation>
    </message>
    <message>
      <source>1 recipe</source>
      <extracomment>tracker.recipes.one</extracomment>
      <translation>1 receta</translation>
    </message>
    <message>
      <source>{count} recipes</source>
      <extracomment>tracker.recipes</extracomment>
      <translation>{count} recetas</translation>
    </message>
    <message>
      <source>Nothing answers at {url}: check the address and port, and that the tracker is running.</source>
      <extracomment>tracker.refused</extracomment>
      <translation>Nada responde en {url}: revise la dirección y el puerto, y que el tracker esté en marcha.</translation>
    </message>
    <message>
      <source>Could not reach {url} ({error}): check the address and your network connection.</source>
      <extracomment>tracker.unreachable</extracomment>
      <translation>No se pudo llegar a {url} ({error}): revise la dirección y su conexión de red.</translation>
    </message>
    <message>
      <source>{url} did not answer within {seconds} s: check the address, or try again when the network is less busy.</source>
      <extracomment>tracker.timeout</extracomment>
      <translation>{url} no respondió en {seconds} s: revise la dirección, o inténtelo de nuevo cuando la red esté menos ocupada.</translation>
    </message>
    <message>
      <source>Could not read {url} ({error}): check the address and try again.</source>
      <extracomment>tracker.unreadable</extracomment>
      <translation>No se pudo leer {url} ({error}): revise la dirección e inténtelo de nuevo.</translation>
    </message>
    <message>
      <source>{url} answered with HTTP {status} {phrase}: check the address, or ask the tracker's operator.</source>
      <extracomment>tracker.http</extracomment>
      <translation>{url} respondió con HTTP {status} {phrase}: revise la dirección, o pregunte al operador del tracker.</translation>
    </message>
    <message>
      <source>{url} answered with HTTP {status}: ask the network's organiser.</source>
      <extracomment>tracker.http.network</extracomment>
      <translation>{url} respondió con HTTP {status}: pregunte al organizador de la red.</translation>
    </message>
    <message>
      <source>{url} is not a MeshNet tracker ({why}): check the address and port.</source>
      <extracomment>tracker.not-meshnet</extracomment>
      <translation>{url} no es un tracker de MeshNet ({why}): revise la dirección y el puerto.</translation>
    </message>
    <message>
      <source>it has no MeshNet state page</source>
      <extracomment>tracker.why.no-state-page</extracomment>
      <translation>no tiene página de estado de MeshNet</translation>
    </message>
    <message>
      <source>its answer is not JSON</source>
      <extracomment>tracker.why.not-json</extracomment>
      <translation>su respuesta no es JSON</translation>
    </message>
    <message>
      <source>its answer is not a MeshNet state</source>
      <extracomment>tracker.why.not-state</extracomment>
      <translation>su respuesta no es un estado de MeshNet</translation>
    </message>
    <message>
      <source>its state has no generated_at time</source>
      <extracomment>tracker.why.no-time</extracomment>
      <translation>su estado no tiene hora generated_at</translation>
    </message>
    <message>
      <source>its state has no {name} list</source>
      <extracomment>tracker.why.no-list</extracomment>
      <translation>su estado no tiene lista {name}</translation>
    </message>
    <message>
      <source>its state has no live node count</source>
      <extracomment>tracker.why.no-count</extracomment>
      <translation>su estado no tiene recuento de nodos activos</translation>
    </message>
    <message>
      <source>its recipe list is not in the MeshNet shape</source>
      <extracomment>tracker.why.recipes</extracomment>
      <translation>su lista de recetas no tiene la forma de MeshNet</translation>
    </message>
    <message>
      <source>its layer suggestion is not in the MeshNet shape</source>
      <extracomment>tracker.why.allocation</extracomment>
      <translation>su sugerencia de capas no tiene la forma de MeshNet</translation>
    </message>
    <message>
      <source>its network answer is not in the MeshNet shape</source>
      <extracomment>tracker.why.network</extracomment>
      <translation>su respuesta de red no tiene la forma de MeshNet</translation>
    </message>
    <message>
      <source>{url} cannot suggest layers (it does not know this model or is an older tracker); the suggestion below is from this computer alone.</source>
      <extracomment>tracker.no-suggestion</extracomment>
      <translation>{url} no puede sugerir capas (no conoce este modelo o es un tracker antiguo); la sugerencia de abajo es solo de este ordenador.</translation>
    </message>
    <message>
      <source>{url} could not suggest layers (HTTP {status}).</source>
      <extracomment>tracker.suggestion.failed</extracomment>
      <translation>{url} no pudo sugerir capas (HTTP {status}).</translation>
    </message>
    <message>
      <source>{url} could not suggest layers (HTTP {status}: {detail}).</source>
      <extracomment>tracker.suggestion.failed.detail</extracomment>
      <translation>{url} no pudo sugerir capas (HTTP {status}: {detail}).</translation>
    </message>
    <message>
      <source>Starting the node…</source>
      <extracomment>node.starting</extracomment>
      <translation>Iniciando el nodo…</translation>
    </message>
    <message>
      <source>Stopping: handing open sessions to other computers and leaving the network…</source>
      <extracomment>node.stopping</extracomment>
      <translation>Deteniendo: pasando las sesiones abiertas a otros ordenadores y saliendo de la red…</translation>
    </message>
    <message>
      <source>Contribution is off.</source>
      <extracomment>node.off</extracomment>
      <translation>La colaboración está desactivada.</translation>
    </message>
    <message>
      <source>Contribution is off (the node had to be ended).</source>
      <extracomment>node.off.ended</extracomment>
      <translation>La colaboración está desactivada (hubo que terminar el nodo).</translation>
    </message>
    <message>
      <source>MeshNet could not start the node: {error}</source>
      <extracomment>node.cannot-start</extracomment>
      <translation>MeshNet no pudo iniciar el nodo: {error}</translation>
    </message>
    <message>
      <source>The node stopped unexpectedly ({detail}). Retry, or run the doctor.</source>
      <extracomment>node.crashed</extracomment>
      <translation>El nodo se detuvo inesperadamente ({detail}). Reintente, o ejecute el doctor.</translation>
    </message>
    <message>
      <source>it was ended or could not start</source>
      <extracomment>node.crashed.ended</extracomment>
      <translation>se terminó o no pudo iniciarse</translation>
    </message>
    <message>
      <source>exit code {code}</source>
      <extracomment>node.crashed.code</extracomment>
      <translation>código de salida {code}</translation>
    </message>
    <message>
      <source>The node did not stop in time, so MeshNet ended it.</source>
      <extracomment>node.killed</extracomment>
      <translation>El nodo no se detuvo a tiempo, así que MeshNet lo terminó.</translation>
    </message>
    <message>
      <source>The node could not start: {error}</source>
      <extracomment>node.start-failed</extracomment>
      <translation>El nodo no pudo iniciarse: {error}</translation>
    </message>
    <message>
      <source>MeshNet recipes</source>
      <extracomment>recipes.title</extracomment>
      <translation>Recetas de MeshNet</translation>
    </message>
    <message>
      <source>Model</source>
      <extracomment>recipes.column.model</extracomment>
      <translation>Modelo</translation>
    </message>
    <message>
      <source>Model digest</source>
      <extracomment>recipes.column.model-digest</extracomment>
      <translation>Resumen del modelo</translation>
    </message>
    <message>
      <source>Recipe digest</source>
      <extracomment>recipes.column.recipe-digest</extracomment>
      <translation>Resumen de la receta</translation>
    </message>
    <message>
      <source>Certified on</source>
      <extracomment>recipes.column.certified-on</extracomment>
      <translation>Certificada el</translation>
    </message>
    <message>
      <source>Nodes</source>
      <extracomment>recipes.column.nodes</extracomment>
      <translation>Nodos</translation>
    </message>
    <message>
      <source>Detail</source>
      <extracomment>recipes.column.detail</extracomment>
      <translation>Detalle</translation>
    </message>
    <message>
      <source>Certified</source>
      <extracomment>recipes.certified</extracomment>
      <translation>Certificada</translation>
    </message>
    <message>
      <source>Dark</source>
      <extracomment>recipes.dark</extracomment>
      <translation>Oscura</translation>
    </message>
    <message>
      <source>Certified: a whole route of nodes produced matching output with this recipe.</source>
      <extracomment>recipes.certified.help</extracomment>
      <translation>Certificada: una ruta completa de nodos produjo resultados coincidentes con esta receta.</translation>
    </message>
    <message>
      <source>Dark: not certified yet. The tracker certifies it once a full route has proven it.</source>
      <extracomment>recipes.dark.help</extracomment>
      <translation>Oscura: aún no certificada. El tracker la certifica cuando una ruta completa la haya demostrado.</translation>
    </message>
    <message>
      <source>Filter by model, recipe, status or digest</source>
      <extracomment>recipes.filter</extracomment>
      <translation>Filtrar por modelo, receta, estado o resumen</translation>
    </message>
    <message>
      <source>★ marks the recipe this computer serves.</source>
      <extracomment>recipes.legend</extracomment>
      <translation>★ marca la receta que sirve este ordenador.</translation>
    </message>
    <message>
      <source>This computer serves this recipe.</source>
      <extracomment>recipes.served.tip</extracomment>
      <translation>Este ordenador sirve esta receta.</translation>
    </message>
    <message>
      <source>{count} layers</source>
      <extracomment>recipes.layers</extracomment>
      <translation>{count} capas</translation>
    </message>
    <message>
      <source>{detail} Why dark: {why}</source>
      <extracomment>recipes.why-dark</extracomment>
      <translation>{detail} Por qué oscura: {why}</translation>
    </message>
    <message>
      <source>Reading recipes from {url}…</source>
      <extracomment>recipes.reading</extracomment>
      <translation>Leyendo recetas de {url}…</translation>
    </message>
    <message>
      <source>Updated {time}: {count} recipes, {certified} certified, {dark} dark.</source>
      <extracomment>recipes.updated</extracomment>
      <translation>Actualizado a las {time}: {count} recetas, {certified} certificadas, {dark} oscuras.</translation>
    </message>
    <message>
      <source>The tracker knows no recipes yet: they appear once nodes register.</source>
      <extracomment>recipes.empty</extracomment>
      <translation>El tracker aún no conoce recetas: aparecen cuando se registran nodos.</translation>
    </message>
    <message>
      <source>Could not read recipes: {sentence}</source>
      <extracomment>recipes.failed</extracomment>
      <translation>No se pudieron leer las recetas: {sentence}</translation>
    </message>
    <message>
      <source>Could not read recipes: {sentence} The list shows the last recipes read.</source>
      <extracomment>recipes.failed.kept</extracomment>
      <translation>No se pudieron leer las recetas: {sentence} La lista muestra las últimas recetas leídas.</translation>
    </message>
    <message>
      <source>Something went wrong reading the recipes; it is logged. Try Refresh.</source>
      <extracomment>recipes.failed.other</extracomment>
      <translation>Algo falló al leer las recetas; queda registrado. Pruebe Actualizar.</translation>
    </message>
  </context>
</TS>
