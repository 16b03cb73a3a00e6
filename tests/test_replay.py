#!/usr/bin/env python3
"""The replay page in a real browser: ./sim writes the page of solo_trot (--html), headless
Chromium opens it, and the test fails on any console error or uncaught exception, unless the
replay moves (a screenshot after a second of play differs from the first frame) and shows the
robot (coloured pixels around the base's projection on the screen), or when the page asks for
anything from the network. The camera frames the robot whatever its size: the box around the
robot's shapes spans 40-100 % of the view's height or width on the trot's page and on the passive
walker's (a 1 m walker once showed as a small figure far away). Chromium is driven over its DevTools protocol on a pipe (standard
library only). Needs Debian's chromium (`make deps`); MBS_SIM names the ./sim to run.

    MBS_SIM=./sim python3 tests/test_replay.py
    MBS_REPLAY_SHOT=docs/images/replay_trot.png ...   also saves the README's screenshot
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pycheck import check, finish  # noqa: E402


def png_pixels(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG, filters undone."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "PNG colour type %d depth %d" % (ctype, depth)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (fd 3: commands in, fd 4: out)."""

    def __init__(self, exe, profile):
        cmd_r, self.cmd_w = os.pipe()
        self.out_r, out_w = os.pipe()

        def child_fds():
            # through fresh numbers first: a pipe end that already is 3 or 4 would keep its
            # close-on-exec flag through a dup2 onto itself, or be overwritten by the other
            a, b = os.dup(cmd_r), os.dup(out_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [exe, "--headless", "--no-sandbox", "--remote-debugging-pipe", "--user-data-dir=" + profile,
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--window-size=1200,900",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "about:blank"]
        # close_fds=False: the fds made 3 and 4 by child_fds would be closed after it otherwise
        self.proc = subprocess.Popen(args, preexec_fn=child_fds, close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(out_w)
        self.next_id, self.buf, self.events = 0, b"", []

    def _read(self, timeout):
        import select
        end = time.time() + timeout
        while b"\0" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.out_r], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.out_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def pump(self, seconds):
        """Collects events for a while (the page keeps playing meanwhile)."""
        end = time.time() + seconds
        while time.time() < end:
            try:
                self.events.append(self._read(end - time.time()))
            except TimeoutError:
                break

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main():
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    check(exe is not None, "no chromium on PATH: install Debian's chromium (make deps)")
    if not exe:
        finish("replay")
    sim = os.path.abspath(os.environ.get("MBS_SIM", os.path.join(ROOT, "sim")))
    tmp = tempfile.mkdtemp(prefix="mbs_replay_")
    try:
        page = os.path.join(tmp, "trot.html")
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        run = subprocess.run([sim, "scenarios/solo_trot.ini", "--html", page, "--quiet", "--set", "run.duration=3"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        check(run.returncode == 0, "sim --html exited %d: %s" % (run.returncode, run.stderr.strip()))
        walker = os.path.join(tmp, "walker.html")
        wrun = subprocess.run([sim, "scenarios/passive_walker.ini", "--html", walker, "--quiet", "--set",
                               "run.duration=0.2"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        check(wrun.returncode == 0, "sim --html (walker) exited %d: %s" % (wrun.returncode, wrun.stderr.strip()))
        rough = os.path.join(tmp, "rough.html")
        rrun = subprocess.run([sim, "scenarios/solo_rough.ini", "--html", rough, "--quiet", "--set", "run.duration=0.5"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        check(rrun.returncode == 0, "sim --html (rough) exited %d: %s" % (rrun.returncode, rrun.stderr.strip()))
        # the terrain's grid is on the page (136 x 101 points over 2.7 m x 2 m at 2 cm)
        check(os.path.exists(rough) and '"heightfields":[{"nx":136,"ny":101,' in open(rough, encoding="utf-8").read(),
              "the rough page has no heightfield")
        check(os.path.exists(page), "no page written")
        if not os.path.exists(page):
            finish("replay")
        html = open(page, encoding="utf-8").read()
        # self-contained: no script, style or image from anywhere else
        # (URLs inside the libraries' code, e.g. XML namespaces, are not loads: the browser's
        # network log below checks what is actually requested)
        for needle in ("<script src", "<link ", "<img "):
            check(needle not in html.lower(), "the page loads something: '%s'" % needle)
        browser = Browser(exe, os.path.join(tmp, "profile"))
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            sess = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime", "Log", "Page", "Network"):
                browser.send(domain + ".enable", session=sess)
            browser.send("Page.navigate", {"url": "file://" + page}, session=sess)

            def evaluate(expr):
                r = browser.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=sess)
                if "exceptionDetails" in r:
                    raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"].get("text")))
                return r["result"].get("value")

            def wait_ready():
                for _ in range(100):
                    if evaluate("!!(window.mbsReplay && window.mbsReplay.ready)"):
                        return True
                    browser.pump(0.2)
                return False

            ready = wait_ready()
            check(ready, "the page never became ready")
            if ready:
                evaluate("mbsReplay.play(false); mbsReplay.seek(0); 0")
                view = evaluate("(function(){var r=document.getElementById('view').getBoundingClientRect();"
                                "return [r.left, r.top, r.width, r.height];})()")
                clip = {"x": view[0], "y": view[1], "width": view[2], "height": view[3], "scale": 1}

                def shot():
                    r = browser.send("Page.captureScreenshot", {"format": "png", "clip": clip}, session=sess)
                    import base64
                    return png_pixels(base64.b64decode(r["data"]))

                w, h, first = shot()
                base0 = evaluate("mbsReplay.baseOnScreen()")
                evaluate("mbsReplay.play(true); 0")
                browser.pump(1.0)
                frame = evaluate("mbsReplay.frame()")
                check(frame > 0, "the replay did not advance in a second (frame %s)" % frame)
                _, _, later = shot()
                changed = sum(1 for y in range(0, h, 2) for x in range(0, w, 2) if first[y][x] != later[y][x])
                check(changed > 200, "a second of replay changed only %d sampled pixels of the view" % changed)
                base1 = evaluate("mbsReplay.baseOnScreen()")
                for name, rows, base in (("first frame", first, base0), ("after a second", later, base1)):
                    bx, by = int(base["x"] - view[0]), int(base["y"] - view[1])
                    coloured = 0
                    for y in range(max(0, by - 40), min(h, by + 40)):
                        for x in range(max(0, bx - 60), min(w, bx + 60)):
                            r, g, b = rows[y][x]
                            coloured += max(r, g, b) - min(r, g, b) > 40   # sky and ground are grey-blue
                    check(coloured > 300, "%s: only %d coloured pixels around the base at (%d, %d)"
                          % (name, coloured, bx, by))
                # the README's picture (make replay-screenshot): the whole window after 1.5 s of replay
                shot_path = os.environ.get("MBS_REPLAY_SHOT")
                if shot_path:
                    import base64
                    evaluate("mbsReplay.play(false); mbsReplay.seek(150); 0")
                    r = browser.send("Page.captureScreenshot", {"format": "png"}, session=sess)
                    with open(shot_path, "wb") as f:
                        f.write(base64.b64decode(r["data"]))
                    print("  wrote " + shot_path)
            def framed(name):
                on = evaluate("mbsReplay.robotOnScreen()")
                check(on is not None and 0.4 <= max(on["width"], on["height"]) <= 1.0,
                      "%s: the robot spans %s of the view" % (name, on))

            if ready:
                framed("solo_trot")
                browser.send("Page.navigate", {"url": "file://" + walker}, session=sess)
                browser.pump(0.3)
                ready = wait_ready()
                check(ready, "the walker's page never became ready")
                if ready:
                    framed("passive_walker")
                # the terrain drawn: the page readies, frames the robot, and throws nothing (below)
                browser.send("Page.navigate", {"url": "file://" + rough}, session=sess)
                browser.pump(0.3)
                ready = wait_ready()
                check(ready, "the rough terrain's page never became ready")
                if ready:
                    framed("solo_rough")
            browser.pump(0.2)
        finally:
            browser.close()
        errors = []
        for e in browser.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append("exception: " + json.dumps(p.get("exceptionDetails", {}).get("exception", {}).get(
                    "description", p.get("exceptionDetails", {}).get("text"))))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description")))
                                                                     for a in p.get("args", []))))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append("log: " + p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not (url.startswith("file://") or url.startswith("data:") or url.startswith("blob:")
                        or url == "about:blank"):
                    errors.append("network request: " + url)
        for e in errors:
            print("  " + e)
        check(not errors, "%d console errors, exceptions or network requests" % len(errors))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish("replay")


if __name__ == "__main__":
    main()
