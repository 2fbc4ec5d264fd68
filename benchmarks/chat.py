"""Chat round trip: a visitor's message to the reply shown, through gunicorn and a real Celery worker.

Run: .venv/bin/python benchmarks/chat.py [--conversations 20] [--messages 10]
gunicorn as the Procfile runs it (2 processes of 8 threads), a Celery worker
of 2 processes, PostgreSQL and Redis. Each of the concurrent conversations
loads the widget page (its token), then sends its messages one after the
other, and after each polls as the page's script does (static/chat.js: every
150 ms after a send, until the reply comes) until the automation's
chat_reply shows; the round trip is from before the POST to the poll answer
that carries the reply. A pause of THINK seconds between messages stands for
the visitor reading and typing. Goal (issue 15): median under 300 ms, p99
under 1 s at 20 concurrent conversations. Also reported: the polls per reply
and the idle poll's own time (one conversation with nothing new).
"""

import argparse
import re
import statistics
import subprocess
import threading
import time

import httpx
from common import PYTHON, ROOT, bench_env, prepare, start_gunicorn

PORT = 8941
SOON = 0.15  # static/chat.js SOON: the poll interval right after a send
SETUP = """
from django.contrib.auth import get_user_model
from automations import services
user = get_user_model().objects.create_user("bench")
a = services.create_automation(owner=user, name="chat", enabled=True, definition={
    "trigger": {"type": "chat", "title": "Bench"},
    "steps": [{"id": "seen", "kind": "set_values", "values": {"n": "{{trigger.history}}"}},
              {"id": "answer", "kind": "chat_reply", "text": "You said: {{trigger.message}}"}]})
print(services.chat_widget_url(a).rsplit("/", 1)[1])
"""


def conversation(
    base: str, key: str, messages: int, think: float, times: list, posts: list, polls: list, errors: list
) -> None:
    with httpx.Client(base_url=base, timeout=30) as client:
        token = re.search(r'data-token="([^"]+)"', client.get(f"/webchat/{key}").text).group(1)
        headers = {"X-Chat-Token": token}
        after = 0
        for n in range(messages):
            started = time.perf_counter()
            sent = client.post(f"/webchat/{key}/messages", json={"text": f"message {n}"}, headers=headers)
            posts.append((n, time.perf_counter() - started))
            if sent.status_code != 201:
                errors.append(sent.status_code)
                continue
            after, count = sent.json()["message"]["id"], 0
            while True:
                count += 1
                found = client.get(f"/webchat/{key}/messages", params={"after": after}, headers=headers).json()
                if any(m["role"] == "bot" for m in found["messages"]):
                    times.append(time.perf_counter() - started)
                    polls.append(count)
                    after = found["messages"][-1]["id"]
                    break
                if time.perf_counter() - started > 30:
                    errors.append("no reply in 30 s")
                    break
                time.sleep(SOON)
            time.sleep(think)


def idle_poll_ms(base: str, key: str, count: int = 300) -> float:
    with httpx.Client(base_url=base, timeout=30) as client:
        token = re.search(r'data-token="([^"]+)"', client.get(f"/webchat/{key}").text).group(1)
        spent = []
        for _ in range(count):
            started = time.perf_counter()
            client.get(f"/webchat/{key}/messages", params={"after": 0}, headers={"X-Chat-Token": token})
            spent.append(time.perf_counter() - started)
    return statistics.median(spent) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--think", type=float, default=1.0)
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--database", default="flowgate_bench_chat")
    parser.add_argument("--redis-db", default="2")
    args = parser.parse_args()

    # One client address for every visitor here: the limits would otherwise count them as one.
    rates = {"CHAT_RATE_IP": "100000/m", "CHAT_RATE_WIDGET": "100000/m", "CHAT_RATE_CONVERSATION": "100000/m"}
    env = bench_env(args.database, args.port, args.redis_db, **rates)
    key = prepare(env, SETUP)
    base = f"http://127.0.0.1:{args.port}"
    # Each request's own time in the web process, to tell the server's share of a slow answer from the client's.
    access_log = ROOT / "var" / "bench" / "chat-access.log"
    access_log.parent.mkdir(parents=True, exist_ok=True)
    access_log.unlink(missing_ok=True)
    web_env = {**env, "GUNICORN_CMD_ARGS": f"--access-logfile {access_log} --access-logformat '%(m)s %(U)s %(M)s'"}
    web = start_gunicorn(web_env, args.port)
    worker = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--concurrency",
            "2",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        conversation(base, key, 2, 0, [], [], [], [])  # warm the worker and the web processes
        idle = idle_poll_ms(base, key)
        times: list[float] = []
        posts: list[tuple[int, float]] = []
        polls: list[int] = []
        errors: list = []
        threads = [
            threading.Thread(
                target=conversation, args=(base, key, args.messages, args.think, times, posts, polls, errors)
            )
            for _ in range(args.conversations)
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        with open("/proc/loadavg") as loadavg:
            load = loadavg.read().split()[:3]
    finally:
        for process in (web, worker):
            process.terminate()
            process.wait(timeout=30)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"conversations: {args.conversations}, messages each: {args.messages}, think {args.think} s")
    print(
        f"round trip: median {statistics.median(times) * 1000:.0f} ms, p90 "
        f"{times[int(len(times) * 0.9)] * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms"
    )
    for label, chosen in (
        ("every", posts),
        ("first", [p for p in posts if p[0] == 0]),
        ("later", [p for p in posts if p[0]]),
    ):
        spent = sorted(seconds for _, seconds in chosen)
        p99 = spent[min(len(spent) - 1, int(len(spent) * 0.99))]
        print(
            f"the POST alone, {label} message of a conversation: median {statistics.median(spent) * 1000:.0f} ms, "
            f"p99 {p99 * 1000:.0f} ms, max {spent[-1] * 1000:.0f} ms ({len(spent)})"
        )
    served = [line.split() for line in access_log.read_text().splitlines()]
    for method, label in (("POST", "POST"), ("GET", "poll")):
        spent = sorted(int(ms) for verb, path, ms in served if verb == method and path.endswith("/messages"))
        print(
            f"the {label} inside the web process: median {statistics.median(spent):.0f} ms, "
            f"p99 {spent[int(len(spent) * 0.99)]} ms, max {spent[-1]} ms ({len(spent)}, warm-up included)"
        )
    print(f"polls per reply: median {statistics.median(polls)}, max {max(polls)}; idle poll {idle:.1f} ms")
    print(f"load average during the run (1, 5, 15 min): {' '.join(load)}")
    print(f"errors: {len(errors)} {errors[:5]}; {len(times) / elapsed:.1f} round trips/s over {elapsed:.1f} s")


if __name__ == "__main__":
    main()
