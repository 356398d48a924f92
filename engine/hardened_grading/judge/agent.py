"""The grading kernel's side of the judge (:mod:`hardened_grading.judge`).

While a submission is graded, its test cells run in the grader's own process, out of reach of
the student's code. The judge runs this file's source in the grading kernel, which then answers
its requests (call this function with these arguments; read these variables) over a Jupyter comm
(:func:`serve`), or, for a request that passes a function of the tests, in a cell of its own
(:func:`main`). The kernel never sees a test, an expected value or a comparison, so nothing it
can patch changes a verdict.

The values travel as JSON; arrays as ``.npy`` bytes written without pickle, so that reading an
answer on the grader's side runs none of the student's code. This module uses only the standard
library and numpy; it is also imported by the judge, for :func:`encode` and :func:`decode`.
"""

import base64
import builtins
import contextlib
import io
import json
import os
import random
import re
import sys
import traceback
import warnings

import numpy

MIME = "application/vnd.hardened-grading.judge"
#: The arguments a call sends back as they are after it (``args_after``): those a function can change in place
#: (an array's values, a list's items, a dict's keys, nested settings), so that the judge's own see the change.
MUTABLE = (numpy.ndarray, list, dict)


def encode(value, depth=0):
    """A JSON-able description of `value`: numbers, strings, arrays and their containers."""
    if depth > 20:
        return {"t": "opaque", "type": type(value).__name__, "repr": "(nested too deeply)"}
    if isinstance(value, (numpy.ndarray, numpy.generic)) and numpy.asarray(value).dtype.kind in "biufc":
        return {"t": "scalar" if isinstance(value, numpy.generic) else "array",
                "v": base64.b64encode(npy_bytes(numpy.asarray(value))).decode("ascii")}
    if value is ...:  # a concept question's stub: "not answered yet"
        return {"t": "ellipsis"}
    if value is None or type(value) in (bool, int, float, str):
        return {"t": "py", "v": value}
    if type(value) in (list, tuple):
        return {"t": type(value).__name__, "v": [encode(item, depth + 1) for item in value]}
    if type(value) is dict:
        return {"t": "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if callable(value):
        return {"t": "callable", "name": getattr(value, "__name__", "?")}
    try:
        text = repr(value)[:300]
    except Exception:
        text = "(no repr)"
    if isinstance(value, (numpy.ndarray, numpy.generic)):  # of strings, objects, dates: what it is, not its data
        return {"t": "opaque", "type": type(value).__name__, "repr": text, "kind": value.dtype.kind,
                "shape": list(numpy.shape(value))}
    return {"t": "opaque", "type": type(value).__name__, "repr": text}


def npy_bytes(array):
    """``.npy`` bytes (format 1.0) of `array`, an array of numbers (dtype kind ``b``, ``i``, ``u``, ``f`` or ``c``),
    as ``numpy.save(..., allow_pickle=False)`` writes them, faster (numpy writes its header through ``repr`` and a
    version guess): what ``numpy.load`` and :func:`read_npy` read."""
    fortran = bool(array.flags.f_contiguous and not array.flags.c_contiguous)
    header = "{'descr': %r, 'fortran_order': %r, 'shape': %r, }" % (array.dtype.str, fortran, array.shape)
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"  # the data starts 64-byte aligned, as numpy's
    return (b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1")
            + array.tobytes(order="F" if fortran else "C"))


#: The header numpy's ``save`` writes for an array of numbers (version 1.0), and only it: a plain type, an order, a
#: shape of whole numbers (the spaces that pad it to 64 bytes and its newline after).
_NPY_HEADER = re.compile(rb"\{'descr': '([<>|=][biufc][0-9]{1,2})', 'fortran_order': (True|False), "
                         rb"'shape': \(((?:[0-9]{1,18}, )*(?:[0-9]{1,18},?)?)\), \} *\n")


def read_npy(raw):
    """The array in `raw`, ``.npy`` bytes, as ``numpy.load(..., allow_pickle=False)`` reads it, faster: numpy's
    reader parses each header with ``ast.literal_eval``, the judge's largest cost in a test cell's calls. Bytes
    whose header is not exactly what :func:`encode` writes (a number type, an order, a shape) are numpy's to read,
    and to refuse."""
    if raw[:8] == b"\x93NUMPY\x01\x00" and len(raw) >= 10:
        end = 10 + int.from_bytes(raw[8:10], "little")
        header = _NPY_HEADER.fullmatch(raw[10:end])
        if header is not None:
            dtype = numpy.dtype(header[1].decode("ascii"))
            shape = tuple(int(size) for size in header[3].split(b",") if size.strip())
            size = dtype.itemsize
            for length in shape:
                size *= length
            if len(raw) - end >= size:
                array = numpy.frombuffer(bytearray(raw[end:end + size]), dtype=dtype)
                return array.reshape(shape, order="F" if header[2] == b"True" else "C")
    return numpy.load(io.BytesIO(raw), allow_pickle=False)


#: What a numpy dtype kind that does not cross as numbers holds, as a message says it.
ARRAY_KINDS = {"U": "str", "S": "bytes", "O": "objects", "M": "datetime64", "m": "timedelta64", "V": "void"}


class Opaque:
    """A value the student's code produced that is not a number, string, array of numbers or container.

    `description` says what it is, for a message: ``a numpy array of str, shape (2,)`` for an array that did not
    cross as numbers (`kind` its dtype kind, `shape` its shape), else ``a <type_name>``. Both are the kernel's
    word: only a known kind and a shape of whole numbers are believed.
    """

    def __init__(self, type_name, text, kind=None, shape=None):
        self.type_name, self.text = type_name, text
        self.description = describe_opaque(type_name, kind, shape)

    def __repr__(self):
        return f"<{self.type_name} object: {self.text}>"


def describe_opaque(type_name, kind=None, shape=None):
    """``a numpy array of <what>, shape <shape>`` for an array of dtype kind `kind` (``ARRAY_KINDS``) and `shape`
    (a list of whole numbers), ``a numpy <what> scalar`` for a numpy scalar (`shape` empty); else ``a <type_name>``."""
    whole = isinstance(shape, list) and len(shape) <= 32 and all(type(n) is int and n >= 0 for n in shape)
    if kind in ARRAY_KINDS and whole:
        if type_name != "ndarray" and not shape:
            return f"a numpy {ARRAY_KINDS[kind]} scalar"
        return f"a numpy array of {ARRAY_KINDS[kind]}, shape {tuple(shape)}"
    return f"a {str(type_name)[:60]}"


def decode(data, resolve=None):
    """The value that :func:`encode` described.

    `resolve(data)` turns the description of a function (``"callable"``, by name, or
    ``"callback"``, a function of the tests) back into something to call.
    """
    kind, value = data["t"], data.get("v")
    if kind == "py":
        return value
    if kind == "ellipsis":
        return ...
    if kind in ("array", "scalar"):
        array = read_npy(base64.b64decode(value))
        return array[()] if kind == "scalar" else array
    if kind == "list":
        return [decode(item, resolve) for item in value]
    if kind == "tuple":
        return tuple(decode(item, resolve) for item in value)
    if kind == "dict":
        return {decode(k, resolve): decode(v, resolve) for k, v in value}
    if kind in ("callable", "callback") and resolve is not None:
        return resolve(data)
    return Opaque(data.get("type", kind), data.get("repr", ""), data.get("kind"), data.get("shape"))


def exception_description(error):
    lines = traceback.format_exception(type(error), error, error.__traceback__)
    return {"status": "raised", "types": [c.__name__ for c in type(error).__mro__],
            "message": str(error)[:2000], "traceback": [line[:2000] for line in lines[-12:]]}


class CallbackError(Exception):
    """A function of the tests, passed to the submission's function, raised this."""


def _callback(ident, ask_judge=None):
    """A stand-in for a function of the tests: each call is asked of the judge, over stdin
    (``input``) unless `ask_judge` is given."""

    def callback(*args, **kwargs):
        prompt = json.dumps({"callback": ident, "args": [encode(a) for a in args],
                             "kwargs": [[k, encode(v)] for k, v in kwargs.items()]})
        reply = json.loads((ask_judge or input)(prompt))
        if reply["status"] == "raised":
            raise CallbackError(f"the function passed by the tests raised {reply['types'][0]}: {reply['message']}")
        return decode(reply["value"])

    return callback


def _resolver(namespace, ask_judge=None):
    def resolve(data):
        return _callback(data["id"], ask_judge) if data["t"] == "callback" else namespace.get(data["name"])
    return resolve


def answer(request, namespace, ask_judge=None):
    """Carry out one request of the judge in the kernel's `namespace`; return the reply.

    `ask_judge(prompt)` reaches the judge for a function of the tests; by default ``input``.
    """
    if request["op"] == "batch":  # calls in turn, as if asked one by one; a memory error ends them
        replies = []
        for call in request["calls"]:
            replies.append(answer(call, namespace, ask_judge))
            if "MemoryError" in replies[-1].get("types", []):
                break
        return {"status": "ok", "replies": replies}
    if request["op"] == "state":
        return kernel_state()
    if request["op"] == "get":
        values = {}
        for name in request["names"]:
            if name in namespace:
                value = namespace[name]
                values[name] = {"t": "callable", "name": name} if callable(value) else encode(value)
        return {"status": "ok", "values": values}

    if request["name"] not in namespace:
        return {"status": "raised", "types": ["NameError", "Exception"],
                "message": f"name {request['name']!r} is not defined", "traceback": []}
    function = namespace[request["name"]]
    if not callable(function):
        return {"status": "raised", "types": ["TypeError", "Exception"],
                "message": f"{request['name']} is a {type(function).__name__}, not a function", "traceback": []}
    resolve = _resolver(namespace, ask_judge)
    args = [decode(a, resolve) for a in request["args"]]
    kwargs = {k: decode(v, resolve) for k, v in request["kwargs"]}
    # The call runs as it would in the test cell, run in this kernel: under the numpy error state the test has
    # there (the kernel's own, as the judge mirrors it, with the test's changes), the kernel's warning filters
    # with the test's own added, and, when the test set it, the test's random state, which comes back
    # advanced. The warnings it shows go back to the judge, which shows them where the test called; what it
    # prints, to stdout or stderr, goes back in order (ipykernel would send it after this reply).
    printed = Printed(request.get("max_output"))
    random_given = set_random_state(request.get("random"))
    with numpy.errstate(**_errstate(request)), warnings.catch_warnings(record=True) as caught, printed.capturing():
        _add_filters(request.get("filters"))
        try:
            result = function(*args, **kwargs)
        except KeyboardInterrupt:  # the judge's time limit
            raise
        except BaseException as error:  # noqa: B036  (SystemExit too: it is the student's answer)
            reply = {**exception_description(error)}
        else:
            reply = {"status": "ok", "value": encode(result),
                     "args_after": [encode(a) if isinstance(a, MUTABLE) else None for a in args],
                     "kwargs_after": {k: encode(v) for k, v in kwargs.items() if isinstance(v, MUTABLE)}}
    reply.update(warnings=_warnings(caught), printed=printed.chunks)
    if random_given:
        reply["random"] = random_state()
    return reply


class Printed:
    """What a call prints, on ``sys.stdout`` and ``sys.stderr``, as ``[[stream name, text], ...]`` in order (one
    chunk per run of one stream), up to `limit` characters in all; a last line says how much more there was."""

    def __init__(self, limit=None):
        self.chunks, self.size, self.dropped = [], 0, 0
        self.limit = limit if isinstance(limit, int) and limit > 0 else 1024 * 1024

    def write(self, name, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        kept = text[:max(0, self.limit - self.size)]
        self.size += len(kept)
        self.dropped += len(text) - len(kept)
        if kept:
            if self.chunks and self.chunks[-1][0] == name:
                self.chunks[-1][1] += kept
            else:
                self.chunks.append([name, kept])
        return len(text)

    @contextlib.contextmanager
    def capturing(self):
        """Take what is written to ``sys.stdout`` and ``sys.stderr`` meanwhile, each on the stream it is the
        kernel's (ipykernel's ``OutStream``) for: one the notebook pointed elsewhere (``sys.stderr = sys.stdout``,
        a file) is left as it is, as in a plain run."""
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = (_Stream(self, _stream_name(stream)) if _stream_name(stream) else stream
                                  for stream in saved)
        try:
            yield self
        finally:
            sys.stdout, sys.stderr = saved
            if self.dropped:
                self.chunks.append(["stdout", f"\n[{self.dropped:,} more characters printed by this call were "
                                              "dropped: the grader keeps the first "
                                              f"{self.limit // 1024:,} KiB (c.ResilientExecute.max_output_kb)]\n"])
                self.dropped = 0


def _stream_name(stream):
    """``"stdout"`` or ``"stderr"`` when `stream` is the kernel's own for it (ipykernel's ``OutStream``), else None."""
    name = getattr(stream, "name", None)
    return name if type(stream).__name__ == "OutStream" and name in ("stdout", "stderr") else None


class _Stream(io.TextIOBase):
    """``sys.stdout`` or ``sys.stderr`` during a call: what is written goes to a :class:`Printed`."""

    def __init__(self, printed, name):
        super().__init__()
        self._printed, self.name = printed, name

    encoding, errors = "utf-8", "strict"

    def writable(self):
        return True

    def write(self, text):
        return self._printed.write(self.name, text)

    def isatty(self):
        return False


ERRSTATE_KINDS = ("divide", "over", "under", "invalid")
ERRSTATE_ACTIONS = ("ignore", "warn", "raise", "print")


def _errstate(request):
    """The numpy error state the test had at the call (``numpy.geterr()`` on the judge's side)."""
    given = request.get("errstate") or {}
    return {k: v for k, v in given.items() if k in ERRSTATE_KINDS and v in ERRSTATE_ACTIONS}


def _add_filters(filters):
    """Put the test's own warning filters (``[[action, message, category, module, lineno], ...]``, the first
    first) in front of the kernel's, as a ``warnings.filterwarnings`` in the test cell would."""
    for action, message, category, module, lineno in reversed(filters or []):
        found = warning_category(category)
        if action in FILTER_ACTIONS and found is not None:
            warnings.filterwarnings(action, message or "", found, module or "", int(lineno or 0))


FILTER_ACTIONS = ("error", "ignore", "always", "default", "module", "once")


def warning_category(name):
    """The warning class called `name`: Python's own, or numpy's (``numpy.exceptions``); None for another."""
    found = getattr(builtins, name, None) if isinstance(name, str) else None
    if found is None and isinstance(name, str):
        found = getattr(getattr(numpy, "exceptions", None), name, None)
    return found if isinstance(found, type) and issubclass(found, Warning) else None


def _numpy_printoptions():
    """numpy's print options that can cross as JSON (a ``formatter`` function cannot)."""
    return {k: v for k, v in numpy.get_printoptions().items() if v is None or type(v) in (bool, int, float, str)}


def kernel_state():
    """What a test cell, run in this kernel, would run under: numpy's error state and print options, the working
    folder, and where warnings show (``"stderr"``: Python's own ``warnings.showwarning``; ``"stdout"``: one the
    notebook set, as this course's set-up does)."""
    return {"status": "ok", "errstate": numpy.geterr(), "printoptions": _numpy_printoptions(), "cwd": os.getcwd(),
            "warnings_to": "stderr" if warnings.showwarning is getattr(warnings, "_showwarning_orig", None)
            else "stdout"}


def random_state():
    """numpy's global (legacy) random state and Python's ``random``'s, as JSON."""
    name, keys, position, has_gauss, cached = numpy.random.get_state()
    version, internal, gauss_next = random.getstate()
    return {"numpy": [name, encode(keys), int(position), int(has_gauss), float(cached)],
            "python": [version, list(internal), gauss_next]}


def set_random_state(state):
    """Set numpy's global random state and Python's ``random``'s from :func:`random_state`'s description;
    return whether it was given (and valid)."""
    if not isinstance(state, dict):
        return False
    try:
        name, keys, position, has_gauss, cached = state["numpy"]
        keys = decode(keys)
        version, internal, gauss_next = state["python"]
        numpy.random.set_state((str(name), numpy.asarray(keys, dtype=numpy.uint32), int(position), int(has_gauss),
                                float(cached)))
        random.setstate((int(version), tuple(int(i) for i in internal),
                         None if gauss_next is None else float(gauss_next)))
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _warnings(caught, limit=20):
    """``[[category name, message], ...]`` of the warnings a call raised, the first `limit`."""
    return [[w.category.__name__, str(w.message)[:500]] for w in caught[:limit]]


def answer_text(request_text, namespace, ask_judge=None):
    """:func:`answer` from JSON text to JSON text; a request it cannot carry out gets an error."""
    request = {}
    try:
        request = json.loads(request_text)
        reply = answer(request, namespace, ask_judge)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: B036
        reply = exception_description(error)
    reply["id"] = request.get("id") if isinstance(request, dict) else None
    text = json.dumps(reply)
    limit = request.get("max_reply") if isinstance(request, dict) else None
    if isinstance(limit, int) and len(text) > limit:  # the grader takes no more (ResilientExecute.max_reply_kb)
        text = json.dumps({"status": "raised", "types": ["ReplyTooLarge", "Exception"], "traceback": [],
                           "message": f"the value is {len(text) / 1024:,.0f} KiB as sent to the grader, over the "
                                      f"{limit // 1024} KiB a reply may be (c.ResilientExecute.max_reply_kb)",
                           "id": reply["id"]})
    return text


TARGET = "hardened_grading_judge"
SERVED = "hardened_grading_agent"  #: the kernel object's attribute that holds :func:`main` once served


def serve(namespace):
    """Answer the judge's requests over a comm: a round trip costs a third of running a cell.

    A request that passes a function of the tests goes through :func:`main` instead: only a
    running cell can ask the judge for its result (over stdin). The kernel keeps :func:`main` as its
    attribute :data:`SERVED`, so that such a cell is one short line, not this file again.
    """
    def open_comm(comm, open_message):
        @comm.on_msg
        def receive(message):
            comm.send({"reply": answer_text(message["content"]["data"]["request"], namespace)})

    kernel = get_ipython().kernel  # noqa: F821  (the kernel's)
    kernel.comm_manager.register_target(TARGET, open_comm)
    setattr(kernel, SERVED, main)  # a request run as a cell calls it, without this file sent again


def main(request_text, namespace):
    """Entry point in the kernel: answer the request as one display output."""
    from IPython.display import display

    display({MIME: answer_text(request_text, namespace)}, raw=True)
