// Copy buttons: <button class="copy" data-copy="ELEMENT-ID"> copies that element's text.
// A static file (the Content-Security-Policy allows no inline script).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button.copy[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const status = button.parentElement.querySelector(".copy-status");
  const say = (text) => { if (status) status.textContent = text; };
  if (!source || !navigator.clipboard) { say("Select the text and copy it by hand."); return; }
  navigator.clipboard.writeText(source.textContent).then(
    () => say("Copied."),
    () => say("Could not copy: select the text and copy it by hand."),
  );
});
