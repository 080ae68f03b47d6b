/* What an htmx request that does not succeed does (loaded on every page by
   templates/base.html; one mechanism for the forms and the polls alike):
   - the session has ended (the answer is the sign-in page after a redirect, a 401, or a
     403 whose X-Winnow-Sign-In header says the user is signed out): the whole page goes
     to the sign-in page, with ?next= the page the user is on, so that signing in returns
     there. Nothing is swapped into the page (no sign-in page nested in an item or a poll).
     What the user typed stays in sessionStorage (annotate.js) and is restored on return.
   - any other error status or no answer at all: a visible message where the answer would
     have gone, above what is there (a form keeps what was typed, a poll its last figures);
     a stale form (CSRF, 403) says to reload. The server's own error page is not shown. */
(function () {
  "use strict";
  var LOGIN = "/accounts/login/";
  function say(target, text) {
    if (!target) return;
    var old = target.querySelector(":scope > .request-failed");
    if (old) old.remove();
    var box = document.createElement("div");
    box.className = "errors request-failed";
    box.setAttribute("role", "alert");
    var strong = document.createElement("strong");
    strong.textContent = "Nothing was done. ";
    box.appendChild(strong);
    box.appendChild(document.createTextNode(text));
    target.insertBefore(box, target.firstChild);
  }
  function signIn(target) {
    // A crowd participant has no password: their study's link (its landing page, whose
    // button this browser's binding lets through) signs them in again.
    var study = document.querySelector("[data-study-entry]");
    if (study && study.getAttribute("data-study-entry")) {
      say(target, "Your session has ended: taking you back into the study. What you typed is kept in this browser.");
      window.location.assign(study.getAttribute("data-study-entry"));
      return;
    }
    say(target, "Your session has ended: taking you to sign in. What you typed is kept in this browser.");
    var here = window.location.pathname + window.location.search;
    window.location.assign(LOGIN + "?next=" + encodeURIComponent(here));
  }
  function signedOut(xhr) {
    if (!xhr) return false;
    if ((xhr.responseURL || "").indexOf(LOGIN) !== -1) return true;
    if (xhr.status === 401) return true;
    return xhr.status === 403 && xhr.getResponseHeader("X-Winnow-Sign-In") === "required";
  }
  document.addEventListener("htmx:responseError", function (e) {
    var xhr = e.detail.xhr;
    if (signedOut(xhr)) { signIn(e.detail.target); return; }
    var status = xhr ? xhr.status : 0;
    var csrf = xhr && xhr.getResponseHeader("X-Winnow-Failure") === "csrf";
    var text = csrf
      ? "This page is out of date (its security token expired, or you signed in or out in another tab) (403). Reload the page and repeat; what you typed here is kept."
      : status === 403
        ? "You may not do this (403). Reload the page to see what you may do."
        : status === 413
          ? "The files are too large to upload (413)."
          : "The server could not do this (" + status + "). Try again; if it happens again, tell an administrator.";
    say(e.detail.target, text);
  });
  // A page whose session ended answers an htmx request with HX-Redirect to the sign-in page
  // (core.roles.role_required): a crowd participant has no password, so their page goes
  // back through their study's link instead.
  document.addEventListener("htmx:beforeOnLoad", function (e) {
    var xhr = e.detail.xhr;
    var to = xhr ? xhr.getResponseHeader("HX-Redirect") || "" : "";
    var study = document.querySelector("[data-study-entry]");
    if (to.indexOf(LOGIN) === 0 && study && study.getAttribute("data-study-entry")) {
      e.preventDefault();
      signIn(e.detail.target);
    }
  });
  // A session that ended sends the request on to the sign-in page (status 200 after the
  // redirect): do not swap it in, take the whole page there.
  document.addEventListener("htmx:beforeSwap", function (e) {
    if (e.detail.xhr && (e.detail.xhr.responseURL || "").indexOf(LOGIN) !== -1) {
      e.detail.shouldSwap = false;
      signIn(e.detail.target);
    }
  });
  // A participant who reloads a page after their session ended gets the full sign-in
  // page (no htmx to catch it): the way back into their study is remembered in this
  // browser and offered there (#login-study).
  var STUDY_KEY = "winnow.study-entry";
  function remember() {
    var study = document.querySelector("[data-study-entry]");
    try {
      if (study && study.getAttribute("data-study-entry")) {
        window.localStorage.setItem(STUDY_KEY, study.getAttribute("data-study-entry"));
      }
      var note = document.getElementById("login-study");
      var entry = window.localStorage.getItem(STUDY_KEY);
      if (note && entry && entry.charAt(0) === "/" && entry.charAt(1) !== "/") {
        var p = document.createElement("p");
        var a = document.createElement("a");
        a.href = entry;
        a.id = "back-to-study";
        a.className = "button primary";
        a.textContent = "Back to your study";
        p.appendChild(a);
        note.appendChild(p);
      }
    } catch (err) { /* storage refused (private mode): the note's words remain */ }
  }
  remember();
  document.addEventListener("htmx:sendError", function (e) {
    say(e.detail.target, "The server did not answer: check the connection and try again. What you typed is kept.");
  });
})();
