"""A page checked at a phone's and a desktop's width: axe-core finds no violation of any
impact, the page never scrolls sideways (a table of figures may scroll inside its own box, a
table of records, class ``stack``, never does: at a phone's width each row shows as a card),
no table caption is cut off, every touch target is at least 44 px each way, and the text is the
reader pages' size (20 px).

axe needs JavaScript and the pages run none, so each width audits a copy of the page's HTML,
with the same stylesheet, in a script-enabled context of that width.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The widths every admin page is checked at: a phone (390 px) and a desktop (1280 px).
WIDTHS = (390, 1280)
#: The smallest touch target, each way (WCAG 2.5.5).
TOUCH_TARGET = 44
#: The reader pages' base text size, which the admin pages share.
BASE_TEXT = 20

#: Every control a finger taps, with its size: a link inside a sentence (its block holds more
#: text than the link's) is exempt, as WCAG 2.5.5 exempts it, but a link standing alone is not;
#: a checkbox or radio counts as its label, which a tap on also toggles; hidden and
#: parked-off-screen controls (the skip link) are not there to tap.
_SMALL_TARGETS = """(minimum) => {
  const controls = 'a[href], button, input:not([type=hidden]), select, textarea, summary';
  const small = [];
  for (const control of document.querySelectorAll(controls)) {
    if (control.tagName === 'A') {
      const block = control.closest('p, li, dd, td, th, .hint');
      if (block && block.innerText.trim() !== control.innerText.trim()) continue;
    }
    let target = control;
    if (control.type === 'checkbox' || control.type === 'radio') {
      target = control.closest('label') || (control.labels && control.labels[0]) || control;
    }
    const box = target.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.right <= 0 || box.bottom <= 0) continue;
    if (box.width < minimum || box.height < minimum) {
      const name = (control.innerText || control.value || control.name || '').trim();
      small.push(`${control.tagName.toLowerCase()} "${name.slice(0, 40)}" `
        + `${Math.round(box.width)}x${Math.round(box.height)}`);
    }
  }
  return small;
}"""


#: The outermost elements reaching past the page's right edge, if the page scrolls sideways.
_STICKING_OUT = """() => {
  const edge = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth <= edge) return [];
  const out = [];
  for (const element of document.body.querySelectorAll('*')) {
    if (element.getBoundingClientRect().right <= edge + 0.5) continue;
    if (element.parentElement && element.parentElement.getBoundingClientRect().right > edge + 0.5
        && element.parentElement !== document.body) continue;
    const name = element.tagName.toLowerCase() + (element.className ? '.' + element.className : '');
    out.push(`${name} to ${Math.round(element.getBoundingClientRect().right)}px`);
  }
  return out.slice(0, 5);
}"""


#: Tables of records that scroll sideways in their box, and captions whose text runs past it.
_HIDDEN_SIDEWAYS = """() => {
  const faults = [];
  for (const table of document.querySelectorAll('table.stack')) {
    const box = table.closest('.table-scroll') || table.parentElement;
    if (box.scrollWidth > box.clientWidth + 0.5) {
      faults.push(`the table under "${(table.caption || box).innerText.trim().slice(0, 40)}" `
        + `scrolls sideways (${box.scrollWidth}px in ${box.clientWidth}px)`);
    }
  }
  for (const caption of document.querySelectorAll('caption')) {
    if (caption.getBoundingClientRect().width <= 1) continue;  // visually hidden
    const box = (caption.closest('.table-scroll') || document.body).getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(caption);
    for (const line of range.getClientRects()) {
      if (line.right > box.right + 0.5 || line.left < box.left - 0.5) {
        faults.push(`the caption "${caption.innerText.trim().slice(0, 40)}" is cut off`);
        break;
      }
    }
  }
  return faults;
}"""


def check_screens(browser: Any, page: Any, name: str) -> None:
    """Check ``page`` as it shows now at each of :data:`WIDTHS`; fails naming the page, the
    width and every fault found."""
    from axe_playwright_python.sync_playwright import Axe

    html = page.content()
    faults = []
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 800}, bypass_csp=True)
        try:
            copy = context.new_page()
            copy.set_content(html, wait_until="load")
            text = copy.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
            if text < BASE_TEXT:
                faults.append(f"{width} px: base text {text}px")
            overflow = copy.evaluate(_STICKING_OUT)
            if overflow:
                faults.append(f"{width} px: the page scrolls sideways: " + ", ".join(overflow))
            hidden = copy.evaluate(_HIDDEN_SIDEWAYS)
            if hidden:
                faults.append(f"{width} px: " + ", ".join(hidden))
            small = copy.evaluate(_SMALL_TARGETS, TOUCH_TARGET)
            if small:
                faults.append(f"{width} px: touch targets under 44px: " + ", ".join(small))
            for violation in Axe().run(copy).response["violations"]:
                where = ", ".join(str(node["target"]) for node in violation["nodes"][:3])
                faults.append(
                    f"{width} px: {violation['id']} ({violation['impact']}): "
                    f"{violation['help']} at {where}"
                )
        finally:
            context.close()
    assert not faults, f"{name}: " + "; ".join(faults)


def write_screenshot(page: Any, path: Path, *, clip: dict[str, float] | None = None) -> None:
    """Save ``page`` whole (or ``clip`` of it) to ``path`` for the docs, with every frame in it
    painted: Chromium paints a frame only once it has been on screen, and a full-page capture
    does not scroll, so a frame below the fold came out blank. The viewport is made as tall as
    the page while the picture is taken, then put back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = page.locator("iframe").all()
    if not frames:
        page.screenshot(path=str(path), full_page=True, clip=clip)
        return
    size = page.viewport_size
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        for frame in frames:
            frame.content_frame.locator("body").wait_for()
        page.screenshot(path=str(path), full_page=True, clip=clip)
    finally:
        page.set_viewport_size(size)
