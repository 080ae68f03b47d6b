// Keyboard-first annotation: a key per answer, Enter submits, "?" opens the
// instructions, "p" opens the previous item, "s" skips the item in hand (Alt+p and Alt+s
// do the same from a writing field, where p and s type). Records how
// long the annotator spent on the item (client side; the server falls back to the lease
// time when this is missing). Shows the time left on the lease, and keeps the answer being
// typed in sessionStorage (per campaign and item) until the server has it, so that an
// expired session, a failed request or a reload does not lose it (htmx-errors.js sends
// the annotator to sign in; coming back restores the answer).
(function () {
  "use strict";
  var PREFIX = "winnow:draft:";
  function stamp(root) {
    (root || document).querySelectorAll("input[name=client_started]").forEach(function (el) {
      if (!el.value) el.value = String(Date.now());
    });
  }
  function typing(target) {
    return target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type !== "radio" && target.type !== "checkbox"));
  }
  function answerFields(form) {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && el.name !== "csrfmiddlewaretoken" && el.type !== "hidden" && el.type !== "submit";
    });
  }
  function storage() {
    try { return window.sessionStorage; } catch (err) { return null; }
  }
  function saveDraft(form) {
    var store = storage();
    if (!store || !form || !form.dataset.draft) return;
    var values = {};
    var any = false;
    answerFields(form).forEach(function (el) {
      if (el.type === "radio" || el.type === "checkbox") {
        if (el.checked) { values[el.name] = el.value; any = true; }
      } else if (el.value) {
        values[el.name] = el.value;
        any = true;
      }
    });
    try {
      if (any) store.setItem(PREFIX + form.dataset.draft, JSON.stringify(values));
    } catch (err) { /* storage full or refused: nothing to keep */ }
  }
  function dropDraft(key) {
    var store = storage();
    if (store && key) store.removeItem(PREFIX + key);
  }
  function restoreDraft(root) {
    var store = storage();
    var form = (root || document).querySelector ? (root || document).querySelector("form[data-draft]") : null;
    if (!store || !form) return;
    var raw = store.getItem(PREFIX + form.dataset.draft);
    if (!raw) return;
    var values;
    try { values = JSON.parse(raw); } catch (err) { return; }
    var changed = false;
    answerFields(form).forEach(function (el) {
      if (!(el.name in values) || el.disabled) return;
      if (el.type === "radio" || el.type === "checkbox") {
        var on = el.value === values[el.name];
        if (el.checked !== on) { el.checked = on; changed = true; }
      } else if (el.value !== values[el.name]) {
        el.value = values[el.name];
        changed = true;
      }
    });
    if (changed && !form.querySelector(".restored")) {
      var note = document.createElement("p");
      note.className = "restored";
      note.setAttribute("role", "status");
      note.textContent = "Your unsent answer was restored. Check it and submit.";
      form.insertBefore(note, form.firstChild);
    }
  }
  // The time left on the lease, from the server's expires_at (without JavaScript the page
  // shows the absolute time).
  var ticking = null;
  function tick() {
    var el = document.querySelector("time[data-lease-expires]");
    if (!el) { clearInterval(ticking); ticking = null; return; }
    var left = Math.round((Date.parse(el.getAttribute("datetime")) - Date.now()) / 1000);
    var out = el.parentNode.querySelector(".lease-left");
    if (!out) return;
    if (left <= 0) {
      out.textContent = " (time is up: your answer is still taken while the item has room)";
      el.parentNode.classList.add("ending");
      return;
    }
    var m = Math.floor(left / 60), s = left % 60;
    out.textContent = " (" + m + ":" + (s < 10 ? "0" : "") + s + " left)";
    el.parentNode.classList.toggle("ending", left < 60);
  }
  function startTimer() {
    tick();
    if (ticking === null && document.querySelector("time[data-lease-expires]")) ticking = setInterval(tick, 1000);
  }
  function ready(root) {
    stamp(root);
    restoreDraft(document);
    startTimer();
  }
  document.addEventListener("DOMContentLoaded", function () { ready(document); });
  document.addEventListener("htmx:load", function (e) { ready(e.target); });
  document.addEventListener("input", function (e) {
    if (e.target.form && e.target.form.dataset.draft) saveDraft(e.target.form);
  });
  document.addEventListener("change", function (e) {
    if (e.target.form && e.target.form.dataset.draft) saveDraft(e.target.form);
  });
  // Kept before every send; dropped only once the server has answered with the next page
  // (not a sign-in page, not an error).
  document.addEventListener("htmx:beforeRequest", function (e) {
    if (e.detail.elt && e.detail.elt.dataset && e.detail.elt.dataset.draft) saveDraft(e.detail.elt);
  });
  document.addEventListener("htmx:afterRequest", function (e) {
    var form = e.detail.elt;
    var xhr = e.detail.xhr;
    if (!form || !form.dataset || !form.dataset.draft || !e.detail.successful || !xhr) return;
    if ((xhr.responseURL || "").indexOf("/accounts/login/") !== -1) return;
    dropDraft(form.dataset.draft);
  });
  document.addEventListener("submit", function (e) {
    var form = e.target;
    var started = form.querySelector("input[name=client_started]");
    var elapsed = form.querySelector("input[name=client_elapsed_ms]");
    if (started && elapsed && started.value) elapsed.value = String(Date.now() - Number(started.value));
  }, true);
  document.addEventListener("keydown", function (e) {
    var form = document.getElementById("annotate-form") || document.getElementById("start-form");
    if (e.altKey && !e.ctrlKey && !e.metaKey && (e.code === "KeyS" || e.code === "KeyP")) {
      // Alt+s / Alt+p: skip / previous from anywhere, a writing field too (where s and p type)
      var target = document.getElementById(e.code === "KeyS" ? "skip-form" : "previous-item");
      if (target) {
        e.preventDefault();
        if (e.code === "KeyS") target.requestSubmit(); else target.click();
      }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (form && e.key === "Enter") {
      if (e.target.tagName === "TEXTAREA" && e.shiftKey) return;  // a new line
      if (e.target.tagName === "BUTTON" || e.target.tagName === "SUMMARY" || e.target.tagName === "A") return;
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
    if (e.key === "p") {
      var previous = document.getElementById("previous-item");
      if (previous) { e.preventDefault(); previous.click(); }
      return;
    }
    if (e.key === "s") {
      var skip = document.getElementById("skip-form");
      if (skip) { e.preventDefault(); skip.requestSubmit(); }
      return;
    }
    if (!form) return;
    var radio = form.querySelector('input[type=radio][data-key="' + CSS.escape(e.key.toLowerCase()) + '"]');
    if (radio && !radio.disabled) {
      radio.checked = true;
      radio.focus();
      saveDraft(form);
      e.preventDefault();
    }
  });
})();
