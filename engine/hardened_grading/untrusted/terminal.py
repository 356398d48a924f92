"""What a student wrote, made safe to show on the grader's terminal and in its logs.

A submission's text reaches the grader's terminal and log files by several ways: what its kernel writes to
its own stdout and stderr (``os.write(2, ...)``, a C extension, a subprocess), the messages of its
exceptions and failed checks, the names of the files it sends, and nbgrader's log lines and tracebacks that
quote them. Any of it may hold terminal control sequences (clear the screen, set the window's title,
move the cursor, rewrite a line after a carriage return), bidirectional overrides that show text in another
order than it is, or a newline followed by a line that looks like the grader's own (``[AutogradeApp |
INFO] ...``).

One function does the escaping, :func:`escape`: every control character (C0 and C1, DEL, and so ESC, CSI,
BEL, backspace and carriage return), every bidirectional control and the Unicode line separators are shown
as visible escapes (``\\x1b``, ``\\u202e``). A newline is escaped too, or, in a multi-line log record, kept
with the next line indented, so that nothing a student wrote begins a line of the log. It is applied where
the text leaves the grader:

- :func:`escape_log_records`: every log record of the process (nbgrader's, the engine's, any library's),
  its message, traceback and stack, and every warning's message; installed when :mod:`hardened_grading` is
  imported, as it is by any nbgrader command of a course that uses the engine, and by ``hardened-grade``;
- :func:`capture_output`: the grading kernel's own stdout and stderr (:mod:`hardened_grading.sandbox`) go
  through a relay that escapes each line, marks it as the kernel's, and drops what is beyond
  :data:`KERNEL_OUTPUT_BYTES` with a count;
- ``hardened-grade``'s progress lines, summary and log (:mod:`hardened_grading.class_grading`).
"""

import logging
import os
import re
import warnings

#: What :func:`escape` shows as an escape: C0 controls (newline among them), DEL, C1 controls, the bidirectional
#: marks, embeddings, overrides and isolates, the Unicode line and paragraph separators, and lone surrogates (a file
#: name's bytes that are not UTF-8, which would be written back raw: ``\udc9b`` is the byte 0x9b, a CSI).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")
#: What begins each line after the first of a multi-line log record.
INDENT = "    "


def _visible(match):
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text, indent=None):
    """`text` (a str, bytes or anything ``str()`` takes) with every control character shown as an escape
    (``\\x1b``, ``\\x07``, ``\\u202e``); bytes that are not UTF-8 are shown as ``\\xNN``.

    With `indent` (a str), newlines are kept and each line after the first begins with `indent`: a
    multi-line log record whose continuation lines cannot pass for records of their own. Without it, the
    result is one line.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="backslashreplace")
    elif not isinstance(text, str):
        text = str(text)
    if indent is None:
        return CONTROL.sub(_visible, text)
    return ("\n" + indent).join(CONTROL.sub(_visible, line) for line in text.split("\n"))


def log_text(text):
    """`text` escaped for a log record: newlines kept, each line after the first indented by :data:`INDENT`."""
    return escape(text, INDENT)


# Log records -------------------------------------------------------------------------------------------

class EscapedLogRecord(logging.LogRecord):
    """A log record whose message, traceback (``exc_text``) and stack come out escaped (:func:`log_text`);
    a traceback and a stack are indented as a whole, as continuation lines of the record. What it stores is
    escaped already, so a library that gives a record a class of its own (Sphinx does) still finds
    ``exc_text`` and ``stack_info``."""

    def getMessage(self):
        return log_text(super().getMessage())

    def _escaped(self, name):
        value = self.__dict__.get(name)
        if value is not None and value is not self.__dict__.get(f"_escaped_{name}"):  # set past the setter
            value = self._store(name, value)
        return value

    def _store(self, name, value):
        escaped = None if value is None else INDENT + log_text(value)
        self.__dict__[name] = self.__dict__[f"_escaped_{name}"] = escaped
        return escaped

    exc_text = property(lambda self: self._escaped("exc_text"), lambda self, value: self._store("exc_text", value))
    stack_info = property(lambda self: self._escaped("stack_info"),
                          lambda self, value: self._store("stack_info", value))


def _escaping_factory(made_by):
    def factory(*args, **kwargs):
        record = made_by(*args, **kwargs)
        if type(record) is logging.LogRecord:  # a factory's own class is left as it is
            record.__class__ = EscapedLogRecord
            record.exc_text, record.stack_info = record.__dict__.get("exc_text"), record.__dict__.get("stack_info")
        return record

    factory.escapes_log_records = True
    return factory


def escape_log_records():
    """From now on, every log record this process makes is escaped (:class:`EscapedLogRecord`), whichever
    logger makes it and whichever handler shows it, and so is every warning's message. Done once; calling it
    again changes nothing."""
    current = logging.getLogRecordFactory()
    if not getattr(current, "escapes_log_records", False):
        logging.setLogRecordFactory(_escaping_factory(current))
    if not getattr(warnings.formatwarning, "escapes_log_records", False):
        original = warnings.formatwarning

        def formatwarning(message, category, filename, lineno, line=None):
            return original(log_text(message), category, filename, lineno, line)

        formatwarning.escapes_log_records = True
        warnings.formatwarning = formatwarning


# A kernel's own stdout and stderr ------------------------------------------------------------------------

#: Bytes of a process's own stdout and stderr relayed by default; the grading kernel's come from its limits
#: (``kernel_log_kb``, :class:`hardened_grading.sandbox.limits.Limits`). An honest kernel writes none.
KERNEL_OUTPUT_BYTES = 64 * 1024
#: What begins each line of a kernel's own stdout and stderr on the grader's.
KERNEL_PREFIX = "kernel| "
#: A line longer than this (bytes) is relayed in parts.
LONGEST_LINE = 4096


def capture_output(limit=KERNEL_OUTPUT_BYTES, prefix=KERNEL_PREFIX):
    """Make this process's stdout and stderr (file descriptors 1 and 2, inherited by what it starts) pipes
    to a relay, a child process that writes what comes through each to the original one: line by line,
    escaped (:func:`escape`), each line after `prefix`, and at most `limit` bytes in all; then one line on
    stderr says how many bytes were dropped. The relay ends when every process that holds the pipes has
    ended (a sandbox's last process), or with its process group.

    Return the relay's pid (None where there is no ``fork``).
    """
    if not hasattr(os, "fork"):
        return None
    pipes = {1: os.pipe(), 2: os.pipe()}
    relay = os.fork()
    if relay == 0:
        try:
            for read_end, write_end in pipes.values():
                os.close(write_end)
            _relay({read_end: target for target, (read_end, _) in pipes.items()}, limit, prefix)
        finally:
            os._exit(0)
    for target, (read_end, write_end) in pipes.items():
        os.close(read_end)
        os.dup2(write_end, target)
        os.close(write_end)
    return relay


def _relay(sources, limit, prefix):
    """Copy each of `sources` (``{read fd: target fd}``) to its target as :func:`capture_output` says, until
    every one ends."""
    import select

    pending = {fd: b"" for fd in sources}
    budget, dropped = [limit], [0]

    def emit(target, line):
        size = len(line) + 1  # with its newline
        if size > budget[0]:
            dropped[0] += size
            budget[0] = 0
            return
        budget[0] -= size
        _write_all(target, (prefix + escape(line) + "\n").encode("utf-8", errors="backslashreplace"))

    poller = select.poll()
    for fd in sources:
        poller.register(fd, select.POLLIN)
    while pending:
        for fd, _ in poller.poll():
            if fd not in pending:
                continue
            try:
                chunk = os.read(fd, 65536)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                if pending[fd]:
                    emit(sources[fd], pending[fd])
                del pending[fd]
                poller.unregister(fd)
                os.close(fd)
                continue
            if not budget[0]:  # past the cap: only counted
                dropped[0] += len(pending[fd]) + len(chunk)
                pending[fd] = b""
                continue
            lines = (pending[fd] + chunk).split(b"\n")
            pending[fd] = lines.pop()
            while len(pending[fd]) > LONGEST_LINE:
                lines.append(pending[fd][:LONGEST_LINE])
                pending[fd] = pending[fd][LONGEST_LINE:]
            for line in lines:
                emit(sources[fd], line)
    if dropped[0]:
        _write_all(2, f"{prefix}[{dropped[0]} more bytes of the kernel's own output were dropped]\n".encode())


def _write_all(fd, data):
    """Write `data` to `fd`; one that cannot be written to (a closed terminal) is given up, and the rest is read
    and dropped all the same, so that the kernel never blocks on a full pipe."""
    while data:
        try:
            data = data[os.write(fd, data):]
        except InterruptedError:
            continue
        except OSError:
            return
