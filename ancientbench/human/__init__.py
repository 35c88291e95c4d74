"""``ancientbench human``: a local quiz page that measures a human baseline, answer by answer.

``ancientbench human --port P [--n-per-task N] [--out DIR] [--seed S] [--data DIR_OR_JSONL]`` samples N
test questions per task (seeded, ``random.Random(seed)``, tasks in registry order), serves them on
http://127.0.0.1:P/ (bound to the loopback interface only; standard-library ``http.server``), and records
every answer the moment it is given: one JSON line appended to ``<out>/Human/answers.jsonl``, flushed
and fsync'd before the page is told it was saved. Stopping the server (Ctrl-C, a crash, a kill) loses
nothing; running the same command again resumes at the first unanswered question (the sample is kept
in ``<out>/Human/session.json``). After each answer the results are rewritten, in the same format as a
model's (``<out>/Human/results_0shot.json`` with ``predictions_0shot.jsonl``, model ``"Human"``, no
log-probs), so ``ancientbench report <out>`` shows a "Human" row.

The time of an answer is measured by the page from showing the question to the click (``seconds``);
if the page does not send it, the server's time between serving and receiving the question is used.

API (JSON): ``GET /api/next`` (the next unanswered question, or ``{"done": true}``), ``GET /api/status``,
``POST /api/answer`` with ``{"id", "answer": "A".."D", "elapsed_ms"?}`` as ``application/json``. Only the
participant's own page may call it: every ``/api/`` request carries the random per-start token the page holds
(header ``X-AncientBench-Token``), the ``Host`` must be this server's loopback address (DNS rebinding), a
foreign ``Origin`` or cross-site ``Sec-Fetch-Site`` is refused, and no page may frame it (``X-Frame-Options``,
CSP ``frame-ancestors``). A bad request gets a 4xx answer with ``{"error": ...}``: not from the page 403,
unknown path 404, wrong method 405, malformed JSON (a key given twice included) / bad field / bad letter 400, an
item the page was not served 400, unknown item 404, an item answered already 409, missing length 411, body too large 413, not JSON 415, an answer that could not be saved (disk full: nothing recorded) 507; more than ``MAX_CONNECTIONS``
requests at once get 503, and a connection idle for ``SOCKET_TIMEOUT`` seconds is closed. The default sample
seed is random (stored in the session), so item ids cannot be guessed.
"""

from ..paths import HUMAN_NAME
from .command import add_arguments, main, run
from .server import MAX_BODY, MAX_CONNECTIONS, SECURITY_HEADERS, SOCKET_TIMEOUT, TOKEN_HEADER, QuizHandler, QuizServer, make_server
from .session import DEFAULT_N_PER_TASK, PAGE, HumanSession, SessionError, load_test_items, sample_plan

__all__ = [
    "DEFAULT_N_PER_TASK", "HUMAN_NAME", "MAX_BODY", "MAX_CONNECTIONS", "PAGE", "SECURITY_HEADERS", "SOCKET_TIMEOUT",
    "TOKEN_HEADER", "HumanSession", "QuizHandler", "QuizServer", "SessionError", "add_arguments", "load_test_items",
    "main", "make_server", "run", "sample_plan",
]
