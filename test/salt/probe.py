#!/usr/bin/env python3
"""Tiny salt-api client used by bed.sh to decide when a test bed is ready.

Standard library only, so it runs with any Python 3 (bed.sh uses the venv's).
Every HTTP call has a timeout: a hung salt-api must never hang bed.sh.

    probe.py ready --url URL --user U --password P --eauth E --ids web-01,db-01
        exit 0 when POST /login works and a `local` test.ping through salt-api
        returns true for every listed id; otherwise print why and exit 1.
        With --ids "" only POST /login is checked (bed.sh start-api).
"""
import argparse
import json
import sys
import urllib.error
import urllib.request

HTTP_TIMEOUT = 20  # seconds per request by default; see --http-timeout


def post(url, body, token=None, timeout=HTTP_TIMEOUT):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    if token:
        req.add_header("X-Auth-Token", token)
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)


def ready(args):
    ids = [i for i in args.ids.split(",") if i]
    timeout = max(1.0, min(args.http_timeout, HTTP_TIMEOUT))
    try:
        login = post(
            args.url + "/login",
            {"username": args.user, "password": args.password, "eauth": args.eauth},
            timeout=timeout,
        )
        token = login["return"][0]["token"]
    except urllib.error.HTTPError as e:
        print(f"login: HTTP {e.code}")
        return 1
    except Exception as e:  # connection refused, timeout, bad JSON ...
        print(f"login: {type(e).__name__}: {e}")
        return 1
    if not ids:
        print("ready: login")
        return 0
    # A list target only matches accepted keys, so unaccepted minions are
    # simply missing. Short timeouts keep one probe round under ~5 s.
    chunk = {
        "client": "local",
        "tgt": ids,
        "tgt_type": "list",
        "fun": "test.ping",
        "timeout": 3,
        "gather_job_timeout": 2,
    }
    try:
        ret = post(args.url + "/", [chunk], token, timeout)["return"][0]
    except urllib.error.HTTPError as e:
        print(f"test.ping: HTTP {e.code}")
        return 1
    except Exception as e:
        print(f"test.ping: {type(e).__name__}: {e}")
        return 1
    missing = [i for i in ids if ret.get(i) is not True]
    if missing:
        print("test.ping: not answering yet: " + ",".join(missing))
        return 1
    print("ready: " + ",".join(ids))
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("ready")
    r.add_argument("--url", required=True)
    r.add_argument("--user", required=True)
    r.add_argument("--password", required=True)
    r.add_argument("--eauth", required=True)
    r.add_argument("--ids", required=True)
    # bed.sh passes the time left before its deadline, so that one slow probe
    # cannot push `start` far past its bound.
    r.add_argument("--http-timeout", type=float, default=HTTP_TIMEOUT)
    args = p.parse_args()
    return ready(args)


if __name__ == "__main__":
    sys.exit(main())
