"""srb's desk in a Stage III client lane (runs as root in the lane container).

Listens on a Unix socket for the lane's ``try_test`` and ``report`` commands, hands each
request to srb as one JSON line on stdout and answers the caller with srb's reply line
from stdin. One request at a time; the caller's uid (SO_PEERCRED) goes with it.
"""

import json
import os
import socket
import struct
import sys
import threading

MAX_REQUEST = 4 * 1024 * 1024
LOCK = threading.Lock()


def _reply(conn, text):
    conn.sendall((json.dumps({"text": text}) + "\n").encode())


def serve(conn, number):
    with conn:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
            if len(data) > MAX_REQUEST:
                _reply(conn, "refused: the request is over 4 MiB")
                return
        try:
            request = json.loads(data)
        except ValueError:
            _reply(conn, "refused: the request is not JSON")
            return
        if not isinstance(request, dict):
            _reply(conn, "refused: the request is not an object")
            return
        with LOCK:
            sys.stdout.write(json.dumps({**request, "id": number, "uid": uid}) + "\n")
            sys.stdout.flush()
            answer = sys.stdin.readline()
        if not answer:
            _reply(conn, "refused: srb closed the desk")
            return
        conn.sendall(answer.encode() if answer.endswith("\n") else (answer + "\n").encode())


def main():
    path = sys.argv[1]
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o666)
    server.listen(8)
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    number = 0
    while True:
        conn, _ = server.accept()
        number += 1
        threading.Thread(target=serve, args=(conn, number), daemon=True).start()


if __name__ == "__main__":
    main()
