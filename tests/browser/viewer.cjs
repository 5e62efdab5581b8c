// Drives Debian's Chromium through playwright-core (installed by
// scripts/test.sh into target/tools/playwright) over a folder page and its
// photo view at 1280 and 390 px: screenshots, horizontal overflow, every
// image loaded, the rows of the grid, previous/next by keyboard and link,
// the way back, and every console message. Prints one JSON report.
//
//   LIGHTBOX_PLAYWRIGHT=.../node_modules/playwright-core node viewer.cjs URL OUT_DIR
const { chromium } = require(process.env.LIGHTBOX_PLAYWRIGHT);
const [url, out] = process.argv.slice(2);

const measure = () => ({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  images: [...document.images].map((i) => ({
    src: (i.currentSrc || i.src).slice(0, 120),
    ok: i.complete && i.naturalWidth > 0,
  })),
  frames: [...document.querySelectorAll('.lbx-frame')].map((f) => {
    const r = f.getBoundingClientRect();
    return [Math.round(r.top + window.scrollY), Math.round(r.height)];
  }),
  position: document.querySelector('.lbx-pos')?.textContent ?? null,
});

async function settle(page) {
  await page.waitForLoadState('networkidle');
  // Lazy images load once near the viewport: walk down, then back up.
  await page.evaluate(async () => {
    for (let y = 0; y < document.body.scrollHeight; y += 300) {
      window.scrollTo(0, y);
      await new Promise((r) => setTimeout(r, 30));
    }
    window.scrollTo(0, 0);
  });
  await page.waitForLoadState('networkidle');
}

// Runs `act`, which follows a link, and waits until the next page is in.
async function go(page, act) {
  const before = page.url();
  await act();
  await page.waitForURL((u) => u.href !== before);
  await settle(page);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  const report = {};
  for (const [width, height] of [[1280, 900], [390, 844]]) {
    const page = await browser.newPage({ viewport: { width, height } });
    const console_ = [];
    page.on('console', (m) => console_.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => console_.push(`pageerror: ${e}`));
    page.on('requestfailed', (r) => console_.push(`requestfailed: ${r.url()}`));
    await page.goto(url);
    await settle(page);
    const folder = await page.evaluate(measure);
    await page.screenshot({ path: `${out}/folder-${width}.png`, fullPage: true });

    await go(page, () => page.click('.lbx-frame >> nth=0'));
    const first = page.url();
    const view = await page.evaluate(measure);
    await page.screenshot({ path: `${out}/photo-${width}.png`, fullPage: true });
    // Keyboard only: focus the next link and press Enter (no script on the page).
    await page.focus('a[rel=next]');
    await go(page, () => page.keyboard.press('Enter'));
    const second = page.url();
    const secondView = await page.evaluate(measure);
    await go(page, () => page.click('a[rel=prev]'));
    const previous = page.url();
    await go(page, () => page.click('.lbx-back'));
    const back = page.url();
    report[width] = { folder, view, first, second, secondView, previous, back, console: console_ };
    await page.close();
  }
  await browser.close();
  console.log(JSON.stringify(report));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
