"""The position schemes the course teaches, each tied to its theory sections and its exercises.

This is the one place that says which theory section and which exercises belong to a scheme; the
reference modules are read from the functions the exercises ask for (``posenc_solutions.EXERCISES``), and
titles from the notebooks' headings. The docs site (``docs/``) makes a page of each scheme from it, and
``tests/system/test_docs.py`` checks it against the notebooks: every exercise belongs to a scheme, every section
exists.
"""

from dataclasses import dataclass

from ..layout import ADVANCED, ASSIGNMENT, CURRENT


@dataclass(frozen=True)
class Scheme:
    """A position scheme: its name, a sentence on what it is, its theory sections and its exercises."""

    slug: str  #: the page's file name
    name: str
    summary: str
    theory: tuple  #: section numbers of the theory notebook (``## 5. RoPE`` is 5)
    exercises: tuple  #: (assignment, exercise number) pairs


SCHEMES = (
    Scheme("sinusoidal", "Sinusoidal encodings",
           "The original transformer's fixed code: each position is a vector of sines and cosines at geometric "
           "frequencies, added to the token embeddings.",
           (1, 2), ((ASSIGNMENT, 1), (ASSIGNMENT, 2))),
    Scheme("learned", "Learned absolute tables",
           "One trained vector per position (BERT, GPT-2): what it costs in parameters, and what resizing it to a "
           "longer context does.",
           (3,), ((ASSIGNMENT, 8),)),
    Scheme("relative-bias", "Relative position: Shaw clipping and T5 buckets",
           "Attention that sees the offset between query and key, not their positions: a clipped table of "
           "offsets (Shaw et al.) or logarithmic buckets (T5).",
           (4,), ((ASSIGNMENT, 3), (ASSIGNMENT, 4))),
    Scheme("shaw-vectors", "Shaw's relative attention in vector form, and the skew trick",
           "Relative vectors added to keys and values, what they can do that a scalar bias cannot, and the skew "
           "trick that computes them in linear extra memory.",
           (11, 12), ((ADVANCED, 1), (ADVANCED, 2), (ADVANCED, 3))),
    Scheme("transformer-xl", "Transformer-XL",
           "A four-term score with a memory of earlier segments, sinusoidal relative encodings and the relative "
           "shift.",
           (13,), ((ADVANCED, 4),)),
    Scheme("swin", "Swin's 2-D relative bias",
           "Relative position for image windows: a table over 2-D offsets and the index that reads it, and Swin "
           "V2's small network over log-spaced offsets that replaced the table.",
           (14,), ((ADVANCED, 5), (CURRENT, 8))),
    Scheme("rope", "RoPE",
           "Rotary embeddings rotate queries and keys by their positions, so that a score depends only on the "
           "offset; and the two checkpoint layouts that ship it.",
           (5, 16), ((ASSIGNMENT, 5), (ASSIGNMENT, 6), (ADVANCED, 7))),
    Scheme("rope-variants", "RoPE as current models ship it",
           "Reading a config.json's RoPE settings, partial and proportional rotary (which dimensions turn), "
           "per-layer schemes (Gemma 3's two bases, Llama 4's NoPE layers and chunks), and M-RoPE's three rows of "
           "position ids for text and images.",
           (20,), ((CURRENT, 1), (CURRENT, 4), (CURRENT, 6), (CURRENT, 7))),
    Scheme("rope-scaling", "Scaling RoPE for long context",
           "Position interpolation, NTK-aware and dynamic scaling, YaRN, Llama 3's wavelength bands, LongRoPE and "
           "DeepSeek's YaRN temperature: how a model trained on a short context reads a longer one, and what a KV "
           "cache holds when the frequencies change with the length.",
           (7, 15, 18, 19), ((ADVANCED, 6), (CURRENT, 2), (CURRENT, 3), (CURRENT, 5))),
    Scheme("alibi", "ALiBi",
           "A per-head linear penalty on distance, added to the scores before the softmax, with no position "
           "vectors at all; and how fast kernels add it tile by tile, never building the whole bias.",
           (6, 21), ((ASSIGNMENT, 7), (CURRENT, 9))),
    Scheme("position-ids", "Position ids: padding, KV caches and serving",
           "Which position each token gets when a batch is padded, when decoding one token at a time from a "
           "cache, and in packed batches, sliding windows and attention sinks.",
           (8, 17), ((ASSIGNMENT, 9), (ADVANCED, 8))),
    Scheme("diagnostics", "Long-context diagnostics",
           "Measuring what a model does with position: mean attention distance, entropy, the shift test and the "
           "needle by depth.",
           (9, 10), ((ASSIGNMENT, 10),)),
)
