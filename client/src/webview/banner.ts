/** The banner region: the "not connected" notice and the model's current banner, with its fix and dismiss buttons. */
import { element, icon, iconButton } from './dom';
import type { Panel } from './panel';
import { fixButton } from './turnView';
import type { Banner } from './viewModel';

export function renderBanner({ model, bannerRegion }: Panel): void {
  const banner: Banner | null = model.state.banner;
  const detached = model.state.detached;
  bannerRegion.replaceChildren();
  if (detached !== null) {
    bannerRegion.append(
      element('div', { class: 'banner is-info', role: 'status' }, [
        icon('debug-disconnect'),
        element('div', { class: 'banner-message' }, [detached]),
        element('button', { type: 'button', class: 'button secondary', 'data-action': 'new-discussion' }, ['New discussion']),
      ]),
    );
  }
  if (!banner) return;
  bannerRegion.append(
    element('div', { class: `banner is-${banner.level}`, role: banner.level === 'error' ? 'alert' : 'status' }, [
      icon(banner.level === 'error' ? 'error' : 'info'),
      element('div', { class: 'banner-message' }, [banner.message]),
      ...(banner.fix ? [fixButton(banner.fix)] : []),
      iconButton('close', 'Dismiss', { 'data-action': 'dismiss-banner' }),
    ]),
  );
}
