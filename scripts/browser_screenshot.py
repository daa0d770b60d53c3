"""Screenshot a saved query in Neo4j Browser (headless Chromium + chromedriver via Selenium).

Used to make the README's pictures of evidence paths:

    python scripts/browser_screenshot.py --run RUN_ID --question QUESTION_ID --out docs/img/evidence-path.png

Needs Debian's `chromium` and `chromium-driver` and `pip install selenium` (extra `docs`).
The password is the local server's (NEO4J_PASSWORD or the generated one).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from mhgraph import cypher
from mhgraph.config import load_settings
from mhgraph.graph.connection import credentials

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000"]


def main() -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True)
    ap.add_argument("--question", required=True)
    ap.add_argument("--query", default="browser/evidence_path", help="saved query under mhgraph/cypher/")
    ap.add_argument("--out", type=Path, default=Path("docs/img/evidence-path.png"))
    args = ap.parse_args()

    settings = load_settings()
    user, password = credentials(settings)
    url = f"http://127.0.0.1:{settings.http_port}/browser/"
    style = (Path(__file__).resolve().parents[1] / "mhgraph/cypher/browser/style.grass").read_text()

    opts = webdriver.ChromeOptions()
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        driver.get(url)
        time.sleep(5)
        driver.find_element(By.CSS_SELECTOR, "[data-testid=username]").send_keys(user)
        driver.find_element(By.CSS_SELECTOR, "[data-testid=password]").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "[data-testid=connect]").click()
        time.sleep(4)

        def run(command: str, wait: float = 3.0) -> None:
            editor = driver.find_element(By.CSS_SELECTOR, "[data-testid=activeEditor] textarea")
            editor.click()
            editor.send_keys(command)
            editor.send_keys(Keys.CONTROL, Keys.ENTER)
            time.sleep(wait)

        # Browser keeps its graph style in Redux state; :style with the grass text sets it.
        run(":style " + " ".join(style.split()), 2)
        for frame in driver.find_elements(By.CSS_SELECTOR, "[data-testid=frame] button[title='Close']"):
            frame.click()
        # draw only what the query returns, not every relationship between the nodes it returns
        run(":config autoComplete: false", 2)
        run(f":param run => {json.dumps(args.run)}", 2)  # a quoted, escaped string literal
        run(f":param question => {json.dumps(args.question)}", 2)
        for button in driver.find_elements(By.CSS_SELECTOR, "button[title='Close']"):
            try:
                button.click()
            except Exception:  # noqa: BLE001 - frames vanish as they close
                pass
        run(" ".join(cypher.load(args.query).split()), 8)
        # the usage-statistics notice: its close button is the only one in that banner
        for close in driver.find_elements(By.XPATH, "//*[contains(text(), 'product usage')]/following-sibling::*"):
            close.click()
            time.sleep(1)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(args.out))
        print(f"wrote {args.out}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
