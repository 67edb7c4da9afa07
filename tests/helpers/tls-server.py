#!/usr/bin/python3
"""A small HTTPS server for the interception tests (tests/integration/test-https.c).

tls-server.py CERT KEY PORT [GIT_PROJECT_ROOT]

Listens on 127.0.0.1:PORT (HTTP/1.1, keep-alive) and writes "ready\n" on stdout
once it accepts. Paths:
  /echo...        200, body: the request line and headers as received, then the body
  /big?n=BYTES    200, BYTES bytes of 'x' (Content-Length)
  /seq?n=BYTES    200, BYTES bytes (Content-Length) of numbered lines, "%015d\n"
                  from 0: a byte out of place shows
  /short?n=BYTES  200, Content-Length BYTES, then half of them and the end of
                  the connection
  /closing?n=BYTES  as /big, with "Connection: close", and the connection's end
  /quiet?n=BYTES  as /big, then the connection's end, unsaid (an idle close)
  /chunked        200, a chunked body of three chunks
  /early          200 at once, the body left unread (read as the next request)
  /git/...        git smart HTTP through `git http-backend` (CGI), when
                  GIT_PROJECT_ROOT is given
"""
import http.server
import os
import ssl
import subprocess
import sys
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def _send(self, code, body, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _git(self):
        u = urllib.parse.urlsplit(self.path)
        env = dict(os.environ)
        env.update({
            "GIT_PROJECT_ROOT": sys.argv[4], "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": u.path[len("/git"):], "QUERY_STRING": u.query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "REMOTE_ADDR": "127.0.0.1", "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
        })
        body = self._body()
        env["CONTENT_LENGTH"] = str(len(body))
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            k, _, v = line.decode().partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    def _any(self):
        if self.path.startswith("/git/") and len(sys.argv) > 4:
            return self._git()
        if self.path.startswith("/quiet"):
            n = int(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["n"][0])
            self._send(200, b"q" * n)
            self.close_connection = True
            return
        if self.path.startswith("/big") or self.path.startswith("/closing"):
            n = int(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["n"][0])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            if self.path.startswith("/closing"):
                # the whole body, then the end of the connection (said)
                self.send_header("Connection", "close")
            self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                self.wfile.write(chunk[:n])
                n -= len(chunk)
            return
        if self.path.startswith("/seq") or self.path.startswith("/short"):
            n = int(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["n"][0])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            if self.path.startswith("/short"):
                n //= 2
                self.close_connection = True
            line = 0
            while n > 0:
                block = b"".join(b"%015d\n" % k for k in range(line, line + 4096))
                line += 4096
                self.wfile.write(block[:n])
                n -= len(block)
            return
        if self.path.startswith("/early"):
            # answers before reading the body, and keeps the connection:
            # the body is then read as the next request (a server bug the
            # proxy must not let a client use)
            self._send(200, b"early")
            return
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b"one,", b"two,", b"three"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        body = self._body()
        text = self.requestline + "\n" + str(self.headers)
        self._send(200, text.encode() + body)

    do_GET = do_POST = do_PUT = do_HEAD = _any


def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[1], sys.argv[2])
    # a flood of tunnels (test_hostile_clients) connects 70 at once
    http.server.ThreadingHTTPServer.request_queue_size = 128
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[3])), Handler)
    srv.daemon_threads = True
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
