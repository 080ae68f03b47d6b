// Keyboard-first annotation: a key per answer, Enter submits, "?" opens the
// instructions. Records how long the annotator spent on the item (client side; the
// server falls back to the lease time when this is missing).
(function () {
  "use strict";
  function stamp(root) {
    (root || document).querySelectorAll("input[name=client_started]").forEach(function (el) {
      if (!el.value) el.value = String(Date.now());
    });
  }
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox"));
  }
  document.addEventListener("DOMContentLoaded", function () { stamp(document); });
  document.addEventListener("htmx:load", function (e) { stamp(e.target); });
  document.addEventListener("submit", function (e) {
    var form = e.target;
    var started = form.querySelector("input[name=client_started]");
    var elapsed = form.querySelector("input[name=client_elapsed_ms]");
    if (started && elapsed && started.value) elapsed.value = String(Date.now() - Number(started.value));
  }, true);
  document.addEventListener("keydown", function (e) {
    var form = document.getElementById("annotate-form") || document.getElementById("start-form");
    if (!form || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Enter") {
      if (e.target.tagName === "TEXTAREA" && e.shiftKey) return;  // a new line
      if (e.target.tagName === "BUTTON" || e.target.tagName === "SUMMARY") return;
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (typing(e.target)) return;
    if (e.key === "?") {
      var d = document.getElementById("instructions");
      if (d) d.open = !d.open;
      e.preventDefault();
      return;
    }
    var radio = form.querySelector('input[type=radio][data-key="' + CSS.escape(e.key.toLowerCase()) + '"]');
    if (radio) {
      radio.checked = true;
      radio.focus();
      e.preventDefault();
    }
  });
})();
