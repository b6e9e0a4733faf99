// The script of the layout webview (src/layoutPanel.ts). It builds the page from the extension's
// messages with DOM calls only (no innerHTML), since titles and text come from the document.
// @ts-check
(function () {
  'use strict';
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();

  /** @param {string} id */
  function element(id) {
    const found = document.getElementById(id);
    if (!found) {
      throw new Error('missing element ' + id);
    }
    return found;
  }

  const title = element('title');
  const location = element('location');
  const follow = /** @type {HTMLInputElement} */ (element('follow'));
  const controls = /** @type {HTMLFormElement} */ (element('controls'));
  const dims = element('dims');
  const index = /** @type {HTMLInputElement} */ (element('index'));
  const message = element('message');
  const picture = element('picture');
  const svg = /** @type {HTMLImageElement} */ (element('svg'));
  const textDetails = element('textDetails');
  const text = element('text');
  const dataDetails = element('dataDetails');
  const data = element('data');

  /** @type {Record<string, HTMLInputElement>} */
  let extentInputs = {};

  /** @param {string[]} names @param {Record<string, number>} extents */
  function showDims(names, extents) {
    // Keep what the user is typing when the same dimensions come back.
    const same = names.length === Object.keys(extentInputs).length && names.every((n) => n in extentInputs);
    if (same) {
      return;
    }
    dims.replaceChildren();
    extentInputs = {};
    for (const name of names) {
      const label = document.createElement('label');
      label.title = 'Extent of the dynamic dimension ' + name;
      label.append(name + ' =');
      const input = document.createElement('input');
      input.type = 'number';
      input.min = '0';
      input.step = '1';
      input.placeholder = '?';
      if (extents[name] !== undefined) {
        input.value = String(extents[name]);
      }
      label.append(input);
      dims.append(label);
      extentInputs[name] = input;
    }
  }

  controls.addEventListener('submit', (event) => {
    event.preventDefault();
    /** @type {Record<string, string>} */
    const extents = {};
    for (const [name, input] of Object.entries(extentInputs)) {
      extents[name] = input.value.trim();
    }
    vscode.postMessage({ type: 'apply', extents, index: index.value });
  });

  follow.addEventListener('change', () => {
    vscode.postMessage({ type: 'follow', value: follow.checked });
  });

  window.addEventListener('message', (event) => {
    const msg = event.data;
    follow.checked = Boolean(msg.follow);
    if (msg.type === 'empty') {
      message.textContent = msg.message;
      message.hidden = false;
      picture.hidden = true;
      controls.hidden = true;
      textDetails.hidden = true;
      dataDetails.hidden = true;
      return;
    }
    if (msg.type !== 'layout') {
      return;
    }
    title.textContent = msg.title;
    location.textContent = msg.location;
    message.hidden = true;
    svg.src = msg.svgDataUri;
    svg.alt = msg.title;
    picture.hidden = false;
    showDims(msg.dynamicDims, msg.extents);
    if (document.activeElement !== index) {
      index.value = msg.index ? msg.index.join(', ') : '';
    }
    controls.hidden = false;
    text.textContent = msg.text;
    textDetails.hidden = !msg.text;
    data.textContent = msg.data;
    dataDetails.hidden = false;
  });

  vscode.postMessage({ type: 'ready' });
})();
