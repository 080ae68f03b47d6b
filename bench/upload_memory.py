"""Upload memory benchmark: a 200 MB import through gunicorn, with and without the upload limit.

    .venv/bin/python bench/upload_memory.py [--mb 200] [--under-mb 19]

Sets up a fresh temporary SQLite database with a curator, writes a WinoWhy-shaped JSON
file of the given size (real questions of winowhy.json repeated; the first one broken
so that an import that reads it all is refused and writes nothing, as issue 16 saw),
then, each in a fresh gunicorn with one worker (gthread, one thread, the project's
config/gunicorn.conf.py), streams it to the import page and reads the worker's memory
from /proc: resident before (VmRSS, after a warm-up request), peak while serving
(VmHWM) and resident after (what the worker keeps). The request body is sent in 1 MB
chunks from disk, so the client holds none of it.

- limit: Winnow as configured by default (WINNOW_MAX_UPLOAD_MB=20): the file is dropped
  chunk by chunk once past the limit, and the page names it and the limit (413);
- today's code, same run: the limit raised to 1024 MB, so the whole file is stored and
  read by the importer as the code before the limit did (refused only after parsing);
- under the limit: a file of --under-mb MB with the default limit, read and parsed whole.

Target: the 200 MB upload refused (or read) with the serving process's peak under 200 MB.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHUNK = 1 << 20


def data_file() -> Path:
    base = Path(os.environ.get("WINNOW_DATA_DIR", ROOT.parent / "shared" / "data"))
    path = base / "winowhy" / "winowhy.json"
    if not path.exists():
        sys.exit(f"{path} not found; set WINNOW_DATA_DIR")
    return path


def write_upload(path: Path, megabytes: float) -> int:
    """A JSON array of real WinoWhy questions, repeated to ``megabytes``; the first is broken."""
    questions = json.loads(data_file().read_text(encoding="utf-8"))
    broken = dict(questions[0], correctAnswer="Z")
    target = int(megabytes * CHUNK)
    with path.open("w", encoding="utf-8") as out:
        out.write("[" + json.dumps(broken))
        written = out.tell()
        i = 0
        while written < target:
            piece = ",\n" + json.dumps(questions[i % len(questions)])
            out.write(piece)
            written += len(piece.encode())
            i += 1
        out.write("]\n")
    return path.stat().st_size


def setup(var_dir: Path) -> tuple[str, str]:
    """Migrate a fresh SQLite database, add a curator, open a session: (session id, CSRF token)."""
    os.environ["WINNOW_VAR_DIR"] = str(var_dir)
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.auth.models import Group
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from core.roles import Role

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(username="bench-curator", password=secrets.token_hex(8))
    user.groups.add(Group.objects.get_or_create(name=Role.CURATOR.value)[0])
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    assert session.session_key is not None
    return session.session_key, secrets.token_hex(16)  # a 32-character CSRF secret


def proc_status(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak resident) of a process, in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def worker_pid(master: int) -> int:
    for _ in range(200):
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise RuntimeError("gunicorn started no worker")


def multipart(path: Path, boundary: str, fields: dict[str, str]) -> tuple[int, Iterator[bytes]]:
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items()
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="uploads"; filename="winowhy.json"\r\n'
        "Content-Type: application/json\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body() -> Iterator[bytes]:
        yield head
        with path.open("rb") as fh:
            yield from iter(lambda: fh.read(CHUNK), b"")
        yield tail

    return len(head) + path.stat().st_size + len(tail), body()


def measure(upload: Path, *, limit_mb: int, port: int, session: str, csrf: str) -> dict[str, object]:
    env = dict(
        os.environ,
        WINNOW_MAX_UPLOAD_MB=str(limit_mb),
        WEB_CONCURRENCY="1",
        WINNOW_THREADS="1",
        WINNOW_BIND=f"127.0.0.1:{port}",
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "--log-level", "warning"],
        cwd=ROOT,
        env=env,
    )
    try:
        worker = worker_pid(server.pid)
        cookies = f"sessionid={session}; csrftoken={csrf}"
        for _ in range(300):  # warm up: the import page, as the curator
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                conn.request("GET", "/datasets/import/", headers={"Cookie": cookies})
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    break
            except OSError:
                time.sleep(0.1)
        before = proc_status(worker)
        boundary = "winnowbench" + secrets.token_hex(8)
        length, body = multipart(upload, boundary, {"csrfmiddlewaretoken": csrf, "format": "winowhy"})
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        started = time.perf_counter()
        conn.request(
            "POST",
            "/datasets/import/",
            body=body,
            headers={
                "Cookie": cookies,
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(length),
            },
        )
        response = conn.getresponse()
        page = response.read().decode("utf-8", "replace")
        seconds = time.perf_counter() - started
        after = proc_status(worker)
        conn.close()
        said = ""
        for marker in ("is larger than the upload limit", "Nothing was imported", "Imported"):
            if marker in page:
                start = page.rfind(">", 0, page.index(marker)) + 1
                said = page[start : page.index("<", page.index(marker))].strip()
                break
        return {
            "status": response.status,
            "seconds": seconds,
            "rss_before": before["VmRSS"],
            "peak": after["VmHWM"],
            "rss_after": after["VmRSS"],
            "said": said,
        }
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=200, help="size of the big upload (default 200)")
    parser.add_argument(
        "--under-mb", type=float, default=19, help="a file under the default limit (default 19)"
    )
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="winnow-upload-bench-"))
    try:
        session, csrf = setup(folder / "var")
        from django.conf import settings

        default_limit = int(settings.WINNOW_MAX_UPLOAD_MB)
        big, small = folder / "big.json", folder / "small.json"
        big_size, small_size = write_upload(big, args.mb), write_upload(small, args.under_mb)
        cases = [
            (f"limit {default_limit} MB (Winnow)", big, big_size, default_limit),
            ("no limit (today's code: read whole)", big, big_size, 1024),
            (f"limit {default_limit} MB, file under it", small, small_size, default_limit),
        ]
        print(f"gunicorn, 1 gthread worker x 1 thread; SQLite; uploads written to {folder}")
        print(
            f"{'case':<40}{'upload MB':>10}{'status':>7}{'time s':>8}"
            f"{'RSS before':>11}{'peak':>8}{'RSS after':>10}{'peak - before':>14}"
        )
        results = []
        for n, (label, path, size, limit) in enumerate(cases):
            r = measure(path, limit_mb=limit, port=args.port + n, session=session, csrf=csrf)
            results.append(r)
            print(
                f"{label:<40}{size / CHUNK:>10.1f}{r['status']:>7}{r['seconds']:>8.1f}"
                f"{r['rss_before']:>11.1f}{r['peak']:>8.1f}{r['rss_after']:>10.1f}"
                f"{float(r['peak']) - float(r['rss_before']):>14.1f}"  # type: ignore[arg-type]
            )
            print(f"{'':<40}page: {r['said'][:110]}")
        ok = results[0]["status"] == 413 and float(results[0]["peak"]) < 200  # type: ignore[arg-type]
        print(
            f"target (a {args.mb:.0f} MB import refused with the serving process's peak < 200 MB): "
            f"{'met' if ok else 'NOT met'}"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
