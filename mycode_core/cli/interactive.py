"""The interactive session: a prompt_toolkit prompt with history, multi-line input and slash
commands. Esc or Ctrl-C cancels the running turn, not the session; Ctrl-D or ``/exit`` leaves."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import click

from mycode_core.cli.builtin_commands import COMMANDS
from mycode_core.cli.session_help import help_text
from mycode_core.cli.slash import split_command
from mycode_core.cli.transcript_history import forget_if_empty
from mycode_core.sessions import SessionStore


class InteractiveSession:
    """Reads tasks from the terminal and runs each one through the same runner."""

    def __init__(self, runner: Any, store: SessionStore) -> None:
        self.runner = runner
        self.store = store
        self.renderer: Any = None
        self.keys: Any = None
        """The keyboard watcher of the running turn (:class:`TurnKeys`)."""
        self.typed_ahead = ""
        """What the user typed during the last turn, for the next prompt."""
        self.held = ""
        """What was typed ahead of a cancel (Esc, Ctrl-C): it waits in the prompt, unsent."""
        self.shell_notes: list[str] = []
        """``!command``s run since the last message (they go to the model with the next)."""
        self.shell_typed: list[str] = []
        """Those ``!command``s as typed (the user's words of the next turn)."""
        self._ask_lock = threading.Lock()
        self._asking = False
        self.signalled: Callable[[], int | None] = lambda: None
        """The signal (SIGTERM, SIGHUP) that arrived during a turn: the session leaves with
        128 + it once the turn has drained."""
        self.answered = False
        """Whether a turn has run (the prompt then tells ``notification`` when left idle)."""
        runner.context.ask = self.ask
        runner.context.interactive = True

    def ask(self, question: str, options: list[str]) -> str:
        """Ask the user to pick one of ``options``. Called from the loop's threads; the
        question is put to the main thread, which owns the terminal (see ``AgentRunner.run``).
        Esc or Ctrl-C picks the last option (deny); the turn goes on. The change the call
        would make is shown with the question (:mod:`.approval_preview`)."""
        from mycode_core.cli.approval_preview import approval_preview

        runner = self.runner
        preview = approval_preview(runner.context.current_call)  # this thread's call
        return str(
            runner.main_thread_calls.submit(
                lambda: self._ask_now(question, options, preview),
                runner.context.cancelled,
                options[-1],
            )
        )

    def asking(self) -> bool:
        """Whether a question is open on the main thread now."""
        return self._asking

    def _ask_now(self, question: str, options: list[str], preview: list[str]) -> str:
        with self._ask_lock:
            if self.renderer is not None:
                self.renderer.pause()  # the spinner must not draw over the question
            from mycode_core.cli.number_picker import numbered, pick
            from mycode_core.cli.prompts import choose

            self._asking = True  # Ctrl-C is the prompt's own again (deny)
            try:
                with self.keys.paused() if self.keys is not None else nullcontext():
                    if numbered(options):  # rows with their own numbers (/rewind's turns)
                        answer = pick(question, options)
                    else:
                        answer = choose(question, options, preview)
            finally:
                self._asking = False
            click.echo(click.style(f"  → {answer}", dim=True), err=True)
            return answer

    def _prompt_session(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory
        from prompt_toolkit.key_binding import KeyBindings

        bindings = KeyBindings()

        @bindings.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-c")
        def _interrupt(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text:
                buffer.reset()  # first clear what was typed
            else:
                event.app.exit(exception=KeyboardInterrupt())

        @bindings.add("s-tab")
        def _cycle_mode(event: Any) -> None:
            from mycode_core.cli.mode_switch import current_mode, next_mode, switch_mode

            switch_mode(self.runner, next_mode(current_mode(self.runner)))
            event.app.invalidate()  # the prompt shows the new mode

        @bindings.add("enter")
        def _submit(event: Any) -> None:
            buffer = event.current_buffer
            if buffer.text.endswith("\\"):
                buffer.delete_before_cursor(1)
                buffer.insert_text("\n")
            else:
                buffer.validate_and_handle()

        from mycode_core.cli.completion import PromptCompleter

        history_path = self.runner.home / "prompt_history"
        history_path.parent.mkdir(parents=True, exist_ok=True)
        return PromptSession(
            history=FileHistory(str(history_path)),
            key_bindings=bindings,
            multiline=True,
            completer=PromptCompleter(
                lambda: {**COMMANDS, **self._plugin_descriptions()},
                self.runner.workspace,
                again=lambda: {**COMMANDS, **self._plugin_descriptions(again=True)},
            ),
            complete_while_typing=False,
        )

    def _plugin_descriptions(
        self, *, for_help: bool = False, again: bool = False
    ) -> dict[str, str]:
        """The plugins' commands and their descriptions: every name for Tab completion;
        for ``/help`` an alias shares the line of the command it stands for. ``again``:
        collected anew (Tab found no name for what was typed)."""
        from mycode_core.cli.slash import help_entries, plugin_commands

        commands = plugin_commands(self.runner, lambda message: None, again=again)
        if for_help:
            return {n: t for n, t in help_entries(commands).items() if n not in COMMANDS}
        return {
            name: (command.description or f"(plugin {command.plugin})")
            for name, command in commands.items()
            if name not in COMMANDS
        }

    def run(self, first_prompt: str | None) -> int:
        """Loop until the user leaves; returns the exit code."""
        from mycode_core.cli.tool_check import no_tools_problem
        from mycode_core.errors import SetupError

        try:
            self.runner.prepare()
        except SetupError as exc:
            click.echo(f"mycode: error: {exc}", err=True)
            self.runner.close()
            return 2
        problem = no_tools_problem(self.runner)
        if problem is not None:
            click.echo(f"mycode: error: {problem}", err=True)
            self.runner.close()
            return 2
        click.echo(
            f"mycode · {self.runner.settings.model} · {self.runner.workspace} · /help for help",
            err=True,
        )
        from mycode_core.cli.exit_confirm import HINT, ExitConfirmation

        session = self._prompt_session()
        pending = first_prompt
        leaving = ExitConfirmation()  # a Ctrl-C at the empty prompt: one more soon leaves
        session.default_buffer.on_text_changed += leaving.disarm  # any edit disarms it
        try:
            while True:
                try:
                    if pending is None:
                        pending = self._read(session)
                    leaving.disarm()
                    text = pending.strip()
                    pending = None
                    if not text:
                        continue
                    if split_command(text) is not None:
                        if self._command(text) == "exit":
                            return 0
                        continue
                    if text.startswith("!"):
                        from mycode_core.cli.shell_escape import run_and_note

                        if (
                            note := run_and_note(text[1:].strip(), self.runner.workspace)
                        ) is not None:
                            self.shell_notes.append(note)
                            self.shell_typed.append(text)
                        continue
                    self._turn(text)
                    if (signum := self.signalled()) is not None:
                        return 128 + signum
                except KeyboardInterrupt:  # at the prompt, or typed just before it started
                    pending = None
                    if leaving.press():
                        return 0
                    click.echo(HINT, err=True)
                except EOFError:
                    return 0
        finally:
            self.runner.close()
            forget_if_empty(self.store, str(self.runner.session_id))

    def _read(self, session: Any) -> str:
        """The next prompt. Keys typed during the last turn come first: each line ended with
        Enter is sent in turn, as if typed at its own prompt; what is left waits in the prompt.
        What was typed before the user cancelled a turn is never sent: it waits in the prompt,
        to edit (as Claude Code does: a cancel usually means "stop, I want to redirect")."""
        typed, self.typed_ahead = self.typed_ahead, ""
        line, enter, rest = typed.partition("\n")
        if enter:  # shown as if typed at its prompt (a dumb terminal's prompt ignores defaults)
            self.typed_ahead = rest
            click.echo(f"{self._prompt_text()}{line}", err=True)
            if line.strip():
                session.history.append_string(line)
            return line
        from mycode_core.cli.idle import notify_when_idle

        def typing() -> bool:
            return bool(session.default_buffer.text)

        held, self.held = self.held.strip("\n"), ""
        if held:
            from mycode_core.cli.turn_keys import held_note

            held_note(held)  # a dumb terminal's prompt does not show what it holds
            typed = f"{held}\n{typed}" if typed else held
        with notify_when_idle(self.runner, typing) if self.answered else nullcontext():
            return str(session.prompt(self._prompt_text, default=typed.strip("\n")))

    def _prompt_text(self) -> str:
        """``› ``, led by the permission mode when it is not ``default``."""
        mode = str(getattr(self.runner.settings, "permission_mode", "default"))
        return "› " if mode == "default" else f"[{mode}] › "

    def _turn(self, prompt: str, request: str | None = None) -> None:
        from mycode_core.cli.output import TextRenderer, render_turn
        from mycode_core.cli.signals import CtrlCCancelsTurn
        from mycode_core.cli.turn_keys import TurnKeys

        typed = request
        if self.shell_notes:  # what the user ran with ``!`` since the last message
            typed = "\n".join([*self.shell_typed, request or prompt])
            prompt = "\n\n".join([*self.shell_notes, prompt])
            self.shell_notes, self.shell_typed = [], []
        cut: list[int] = []  # how much was typed when the user cancelled the turn

        def cancel() -> None:
            cut.append(len(keys.typed))
            self.runner.cancel()

        keys = TurnKeys(cancel, on_typed=self._typing)
        self.renderer = TextRenderer(interactive=True)
        try:
            with CtrlCCancelsTurn(cancel, asking=self.asking), keys:
                self.keys = keys
                # an Esc read before the turn began (which clears a cancel) still stops it
                escaped = lambda: keys.escaped or self.signalled() is not None  # noqa: E731
                render_turn(
                    self.runner, prompt, self.renderer, escaped, request=request, typed=typed
                )
            if cut:  # typed before the cancel waits unsent; what came after, as ever
                self.held += self.typed_ahead + keys.typed[: cut[0]]
                self.typed_ahead = keys.typed[cut[0] :]
            else:
                self.typed_ahead += keys.typed
        finally:
            self.renderer = None
            self.keys = None
            self.answered = True

    def _typing(self, typed: str) -> None:
        """Keys typed during the turn (the keyboard's thread): the live view says them."""
        from mycode_core.cli.turn_keys import queued_note

        renderer = self.renderer
        if renderer is not None:
            renderer.show_queued(queued_note(self.typed_ahead + typed))

    def _command(self, text: str) -> str | None:
        word, argument = split_command(text) or (text.lstrip("/"), "")
        name = "/" + word
        if name in ("/exit", "/quit"):
            return "exit"
        if name == "/help":
            click.echo(help_text(self._plugin_descriptions(for_help=True)))
        elif name == "/clear":
            self._replace_runner(messages=[], session_id=None)
            click.echo("Started a fresh conversation.")
        elif name == "/sessions":
            sessions = self.store.list(str(self.runner.workspace))
            if not sessions:
                click.echo("No sessions in this workspace yet.")
            from mycode_core.cli.output import neutralise

            for info in sessions[:20]:
                prompt = " ".join(info.first_prompt.split())[:60]
                click.echo(neutralise(f"{info.id}  {str(info.stop_reason or 'open'):<15} {prompt}"))
        elif name == "/resume":
            self._resume(argument)
        elif name == "/model":
            from mycode_core.cli.model_switch import switch_model

            click.echo(switch_model(self.runner, argument, lambda message: click.echo(message)))
        elif name == "/mode":
            from mycode_core.cli.mode_switch import switch_mode

            click.echo(switch_mode(self.runner, argument))
        elif name in ("/status", "/permissions"):
            from mycode_core.cli.status import permission_lines, status_lines

            lines = status_lines if name == "/status" else permission_lines
            click.echo("\n".join(lines(self.runner)))
        elif name == "/export":
            self._export(argument)
        elif name == "/context":
            click.echo(self.runner.context_report())
        elif name == "/compact":
            self.runner.request_compaction(argument or None)
            click.echo("The conversation will be compacted before the next request.")
        else:
            return self._plugin_command(text, name)
        return None

    def _export(self, argument: str) -> None:
        """``/export [FILE]``: this session's page (the transcript so far) as HTML."""
        from pathlib import Path

        from mycode_core.cli.session_html import write_session_page

        session_id = self.runner.session_id
        target = Path(argument).expanduser() if argument else (
            self.runner.home / "exports" / f"{session_id}.html"
        )  # fmt: skip
        try:
            events = self.store.read_events(session_id) if self.store.exists(session_id) else []
            write_session_page(session_id, events, target)
        except OSError as exc:
            click.echo(f"mycode: cannot write {target}: {exc.strerror or exc}")
            return
        click.echo(f"wrote {target}")

    def _plugin_command(self, text: str, name: str) -> str | None:
        """A plugin's slash command: show its output, run the prompt it returns."""
        from mycode_core.cli.slash import dispatch, names_a_path, unknown_command

        result = dispatch(self.runner, text, lambda message: click.echo(f"mycode: {message}"))
        if result is None and names_a_path(text):  # `/tmp is full`: a prompt
            self._turn(text)
            return None
        if result is None:
            line = unknown_command(self.runner, name.lstrip("/"), click.echo)
            click.echo(f"{line} /help lists them.")
            return None
        if result.output:  # a plugin's text, file names a command chose: never escapes
            from mycode_core.cli.output import neutralise

            click.echo(neutralise(result.output))
        if result.rewind:
            self._rewind(result.rewind)
        if result.prompt:
            self._turn(result.prompt, request=text)
        return None

    def _resume(self, session_id: str) -> None:
        if not session_id:
            from mycode_core.cli.session_picker import pick_session

            picked = pick_session(self.store, str(self.runner.workspace), self.runner.session_id)
            if picked is None:
                return
            session_id = picked
        if not self.store.exists(session_id):
            click.echo(f"No session {session_id!r} in {self.store.root} (see /sessions).")
            return
        from mycode_core.cli.session_lock import busy_line, claim_session

        if not claim_session(self.runner.home, session_id):
            click.echo(f"mycode: {busy_line(self.runner.home, session_id)}")
            return
        from mycode_core.cli.rewind import rewound
        from mycode_core.cli.session_view import build_timeline, recap_lines
        from mycode_core.cli.transcript_history import elsewhere_notice, history_from_events

        events = rewound(self.store.read_events(session_id))
        messages = history_from_events(events)
        self._replace_runner(messages=messages, session_id=session_id)
        for line in recap_lines(build_timeline(session_id, events)):
            click.echo(click.style(line, dim=True))
        click.echo(f"Resumed {session_id} ({len(messages)} messages).")
        if (elsewhere := elsewhere_notice(session_id, events, self.runner.workspace)) is not None:
            click.echo(click.style(f"mycode: {elsewhere}", fg="yellow"))

    def _rewind(self, turn: int) -> None:
        """A plugin's ``/rewind`` restored the files: cut the conversation back to before
        ``turn`` (recorded in the transcript) and go on with the history left."""
        from mycode_core.cli import rewind
        from mycode_core.cli.richtext import plural

        session_id = self.runner.session_id
        rewind.record(self.store, session_id, turn)
        messages = rewind.history(self.store, session_id)
        self._replace_runner(messages=messages, session_id=session_id)
        kept = plural(len(messages), "message")
        click.echo(f"The conversation is back to before turn {turn} ({kept} kept).")

    def _replace_runner(self, messages: list[dict[str, Any]], session_id: str | None) -> None:
        from mycode_core.cli.mentions import expand
        from mycode_core.cli.session_lock import claim_session, release_session
        from mycode_core.runtime.child import run_child
        from mycode_core.runtime.loop import AgentRunner
        from mycode_core.sessions import new_session_id

        old = self.runner
        old.close(reason="resume" if session_id else "clear")
        forget_if_empty(self.store, str(old.session_id))
        new_id = session_id or new_session_id()
        claim_session(old.home, new_id)  # held already when resumed (/resume claimed it)
        if new_id != old.session_id:
            release_session(str(old.session_id))
        self.runner = AgentRunner(
            spawn_child=run_child,
            expand_prompt=expand,
            pm=old.pm,
            settings=old.settings,
            workspace=old.workspace,
            home=old.home,
            session_id=new_id,
            interactive=True,
            ask=self.ask,
            prior_messages=messages,
            resumed_from=session_id,
            start_source="resume" if session_id else "clear",
        )
        self.runner.prepare()
