import { beforeNavigate } from '$app/navigation';

export const LEAVE_QUESTION = 'You have unsaved changes. Leave without saving them?';

/**
 * Every editor asks before its unsaved changes are dropped: following a link, going back, or
 * closing the tab (the browser asks then). Call while the component initializes.
 */
export function askBeforeLeaving(unsaved: () => boolean): void {
  beforeNavigate((navigation) => {
    if (!unsaved()) return;
    if (navigation.type === 'leave') navigation.cancel();
    else if (!confirm(LEAVE_QUESTION)) navigation.cancel();
  });
}
